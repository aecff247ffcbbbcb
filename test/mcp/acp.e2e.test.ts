/**
 * The ACP MCP binding (docs/mcp.md, "ACP tools") end to end: the SDK's own Client over
 * Streamable HTTP against the embedded system, as an ACP platform with a checkout API key calls
 * it. The five tools as the binding names and shapes them, each run through its ACP REST route
 * (so identity, scope, block, contract, idempotency and audit are the route's); every session
 * and every error validated against the vendored 2026-04-17 bundle.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACP_TOOLS } from '../../gateway/agent/mcp/acp/tools.ts';
import { agentTools } from '../../gateway/agent/mcp/tools.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { API_VERSION, acp, issueKey } from '../acp/support/acp.ts';
import { acpJson } from '../acp/support/examples.ts';
import { expectAcp } from '../acp/support/validate.ts';
import { AGENT } from '../procurement/support/agent.ts';

const FIVE = [
  'create_checkout_session',
  'get_checkout_session',
  'update_checkout_session',
  'complete_checkout_session',
  'cancel_checkout_session',
];
const PLATFORM = `${AGENT}/acp-mcp`;
let sys: TestSystem;
const clients: Client[] = [];

beforeAll(async () => {
  sys = await startEmbedded();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await sys?.close();
});

/** A fresh key for its own agent identity (its own bucket and block count). */
async function freshKey(name: string, scopes?: string[]): Promise<string> {
  return (await issueKey(sys, { spiffeId: `${PLATFORM}/${name}`, ...(scopes ? { scopes } : {}) })).key;
}

/** An SDK client with `Authorization: Bearer <key>` that has listed its tools (and so checks results). */
async function connect(headers: Record<string, string>): Promise<{ client: Client; tools: Tool[] }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${sys.url}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'acp-platform', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, tools: (await client.listTools()).tools };
}
const connectWith = (key: string) => connect({ authorization: `Bearer ${key}` });

let counter = 0;
const freshIdem = () => `mcp-${process.pid}-${++counter}-${Date.now()}`;
const meta = (extra: Record<string, unknown> = {}) => ({
  api_version: API_VERSION,
  idempotency_key: freshIdem(),
  ...extra,
});

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const httpMeta = (r: CallToolResult) =>
  (r._meta as Record<string, Record<string, unknown>> | undefined)?.['agent-commerce.example/http'] ?? {};

/** A success: the session as structuredContent, valid ACP, and the same JSON as the text block. */
function sessionOf(r: CallToolResult): Record<string, unknown> {
  expect(r.isError).toBeFalsy();
  const s = r.structuredContent as Record<string, unknown>;
  expectAcp(s.order ? 'CheckoutSessionWithOrder' : 'CheckoutSession', s);
  expect(r.content).toHaveLength(1);
  const first = r.content[0];
  expect(JSON.parse(first?.type === 'text' ? first.text : 'null')).toEqual(s);
  return s;
}

/** The binding's error form: a JSON-RPC error -32000 whose data is ACP's Error. */
async function acpErrorOf(p: Promise<unknown>, code?: string): Promise<Record<string, unknown>> {
  const err = await p.then(
    (r) => {
      throw new Error(`expected a JSON-RPC error, got a result: ${JSON.stringify(r)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  const e = err as McpError;
  expect(e.code).toBe(-32000);
  const data = e.data as Record<string, unknown>;
  expectAcp('Error', data);
  // The JSON-RPC message is ACP's own (the SDK client prefixes "MCP error -32000: ").
  expect(e.message).toBe(`MCP error -32000: ${String(data.message)}`);
  if (code) expect(data.code).toBe(code);
  return data;
}

const ADDRESS = {
  name: 'Buyer',
  line_one: '1 Main St',
  city: 'Springfield',
  state: 'IL',
  country: 'US',
  postal_code: '62701',
};

describe('tools/list with a checkout API key', () => {
  let tools: Tool[];
  beforeAll(async () => {
    tools = (await connectWith(await freshKey('list'))).tools;
  });

  it('lists the five ACP tools of the binding and no /v2 tool', () => {
    expect(tools.map((t) => t.name).sort()).toEqual([...FIVE].sort());
    for (const v2 of agentTools()) expect(tools.map((t) => t.name)).not.toContain(v2.name);
  });

  it.each([
    ['create_checkout_session', ['meta', 'payload'], ['meta', 'payload']],
    ['get_checkout_session', ['meta', 'id'], ['meta', 'id']],
    ['update_checkout_session', ['meta', 'id', 'payload'], ['meta', 'id', 'payload']],
    ['complete_checkout_session', ['meta', 'id', 'payload'], ['meta', 'id', 'payload']],
    ['cancel_checkout_session', ['meta', 'id', 'payload'], ['meta', 'id']],
  ])('%s takes {meta, id, payload} as the binding says', (name, properties, required) => {
    const s = tools.find((t) => t.name === name)?.inputSchema as Record<string, unknown>;
    expect(Object.keys(s.properties as object)).toEqual(properties);
    expect(s.required).toEqual(required);
    const m = (s.properties as Record<string, Record<string, unknown>>).meta;
    expect(m?.required).toEqual(['api_version']);
    expect(m?.additionalProperties).toBe(true);
  });

  it('serves self-contained schemas: every $ref resolves inside the tool, and Ajv 2020 strict compiles them', () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
    addFormats.default(ajv);
    for (const t of tools) {
      expect(() => ajv.compile(t.inputSchema), t.name).not.toThrow();
      expect(t.outputSchema, t.name).toBeDefined();
      expect(() => ajv.compile(t.outputSchema as object), t.name).not.toThrow();
      expect(JSON.stringify(t)).not.toMatch(/"example"/);
    }
  });

  it("accepts the binding's own create and get examples, as the REST bundle would", () => {
    const examples = acpJson<Record<string, { params: { name: string; arguments: unknown } }>>(
      'examples/examples.mcp.agentic_checkout.json',
    );
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const name of ['create_checkout_session_request', 'get_checkout_session_request']) {
      const ex = examples[name]?.params;
      const schema = tools.find((t) => t.name === ex?.name)?.inputSchema as object;
      const validate = ajv.compile(schema);
      expect(validate(ex?.arguments), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('gives titles and hints: get is read-only, cancel destructive, every tool closed-world', () => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('get_checkout_session')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('cancel_checkout_session')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    for (const t of tools) {
      expect(t.title, t.name).toBe(ACP_TOOLS.find((a) => a.name === t.name)?.title);
      expect(t.annotations?.openWorldHint).toBe(false);
    }
  });
});

describe('a checkout over MCP, paid by purchase order', () => {
  let client: Client;
  let key: string;
  beforeAll(async () => {
    key = await freshKey('flow');
    ({ client } = await connectWith(key));
  });

  it('creates, updates, reads and completes: the result is the completed session with its order', async () => {
    const created = await call(client, 'create_checkout_session', {
      meta: meta({ request_id: 'req-mcp-1' }),
      payload: {
        currency: 'usd',
        capabilities: {},
        line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }],
        fulfillment_details: { name: 'Buyer', address: ADDRESS },
      },
    });
    const session = sessionOf(created);
    expect(session.status).toBe('ready_for_payment');
    expect(httpMeta(created)).toMatchObject({
      status: 201,
      location: `/acp/checkout_sessions/${session.id}`,
      request_id: 'req-mcp-1',
    });
    const id = String(session.id);

    const updated = sessionOf(
      await call(client, 'update_checkout_session', {
        meta: meta(),
        id,
        payload: {
          line_items: [
            { id: 'SKU-ABC-000001', quantity: 2 },
            { id: 'SKU-ELC-000004', quantity: 3 },
          ],
        },
      }),
    );
    expect(updated.line_items).toHaveLength(2);

    const read = sessionOf(
      await call(client, 'get_checkout_session', { meta: { api_version: API_VERSION }, id }),
    );
    expect(read).toEqual(updated);

    const done = await call(client, 'complete_checkout_session', {
      meta: meta(),
      id,
      payload: { payment_data: { purchase_order_number: 'PO-MCP-0001', payment_terms: 'net_30' } },
    });
    const completed = sessionOf(done);
    expectAcp('CheckoutSessionWithOrder', completed);
    expect(completed.status).toBe('completed');
    expect(completed.order).toMatchObject({ checkout_session_id: id, status: 'confirmed' });
    expect(httpMeta(done)).toMatchObject({ status: 200 });

    // Read back over REST with the same key: the same session, order included.
    const rest = await acp(sys.url, key, 'GET', `/checkout_sessions/${id}`);
    expect(rest.body).toEqual(completed);
  });

  it("refuses to cancel a completed session in the binding's error form: -32000 with the 405's ACP Error", async () => {
    const s = sessionOf(
      await call(client, 'create_checkout_session', {
        meta: meta(),
        payload: { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] },
      }),
    );
    sessionOf(
      await call(client, 'complete_checkout_session', {
        meta: meta(),
        id: s.id,
        payload: { payment_data: { purchase_order_number: 'PO-MCP-0002' } },
      }),
    );
    const data = await acpErrorOf(
      call(client, 'cancel_checkout_session', { meta: meta(), id: s.id }),
      'session_completed',
    );
    expect(data).toMatchObject({ type: 'invalid_request' });
  });

  it('cancels an open session with an intent trace', async () => {
    const s = sessionOf(
      await call(client, 'create_checkout_session', {
        meta: meta(),
        payload: { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] },
      }),
    );
    const canceled = sessionOf(
      await call(client, 'cancel_checkout_session', {
        meta: meta(),
        id: s.id,
        payload: { intent_trace: { reason_code: 'price_sensitivity' } },
      }),
    );
    expect(canceled.status).toBe('canceled');
  });
});

describe('errors are the REST route’s, in the binding’s form', () => {
  let client: Client;
  let key: string;
  beforeAll(async () => {
    key = await freshKey('errors');
    ({ client } = await connectWith(key));
  });

  it('answers a body the bundle refuses with its ACP Error, the JSONPath rebased into the arguments ($.payload…)', async () => {
    const body = { capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] };
    const data = await acpErrorOf(call(client, 'create_checkout_session', { meta: meta(), payload: body }));
    const rest = await acp(sys.url, key, 'POST', '/checkout_sessions', body);
    expect(rest.status).toBe(400);
    expect(data).toEqual({ ...rest.body, param: `$.payload${String(rest.body.param).slice(1)}` });
    expect(data.param).toBe('$.payload.currency');
  });

  it('answers a missing or unsupported meta.api_version as REST answers API-Version, with supported_versions', async () => {
    const missing = await acpErrorOf(
      call(client, 'get_checkout_session', { meta: {}, id: 'cs_00000000000000000000000000000000' }),
      'missing_api_version',
    );
    expect(missing.supported_versions).toEqual([API_VERSION]);
    await acpErrorOf(
      call(client, 'get_checkout_session', {
        meta: { api_version: '2025-09-29' },
        id: 'cs_00000000000000000000000000000000',
      }),
      'unsupported_api_version',
    );
  });

  it('answers an unknown session 404 not_found, and an id can never reach another route', async () => {
    for (const id of ['cs_00000000000000000000000000000000', '../checkout_sessions', 'x/complete', '?a=b'])
      await acpErrorOf(call(client, 'get_checkout_session', { meta: meta(), id }), 'not_found');
  });

  it.each([
    ['no meta', { id: 'cs_1' }],
    ['meta not an object', { meta: 'x', id: 'cs_1' }],
    ['no id', { meta: { api_version: API_VERSION } }],
    ['an id that is not a string', { meta: { api_version: API_VERSION }, id: 7 }],
    ['an unknown argument', { meta: { api_version: API_VERSION }, id: 'cs_1', payload: {} }],
    ['a meta field that is not a string', { meta: { api_version: 20260417 }, id: 'cs_1' }],
    [
      'a meta field no header can carry',
      { meta: { api_version: API_VERSION, request_id: 'a\r\nb' }, id: 'cs_1' },
    ],
  ])('refuses %s as Invalid params (-32602), before ACP', async (_what, args) => {
    const err = await call(client, 'get_checkout_session', args).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });

  it('answers an unknown tool (a /v2 tool too) with -32602', async () => {
    const err = await call(client, 'place_purchase_order', { quantity: 1 }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(-32602);
  });
});

describe('identity: the MCP request carries the checkout API key', () => {
  const initialize = (headers: Record<string, string>) =>
    fetch(`${sys.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('refuses a request without Authorization (401, no MCP exchange)', async () => {
    const res = await initialize({});
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await expect(connect({})).rejects.toThrow();
  });

  it.each([
    ['an unknown key', `acp_ak_${'0'.repeat(24)}_${'A'.repeat(43)}`],
    ['a malformed key', 'acp_not-a-key'],
  ])('refuses %s with 401 and WWW-Authenticate: Bearer', async (_w, k) => {
    const res = await initialize({ authorization: `Bearer ${k}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await res.json()) as { type: string }).type).toMatch(/invalid-checkout-api-key$/);
  });

  it('refuses a revoked key at once', async () => {
    const issued = await issueKey(sys, { spiffeId: `${PLATFORM}/revoked` });
    expect((await initialize({ authorization: `Bearer ${issued.key}` })).status).toBe(200);
    const admin = await sys.token(['agents:admin'], 'ops-acp');
    const r = await sys.gql('mutation ($id: ID!) { revokeCheckoutApiKey(id: $id) { id } }', {
      token: admin,
      variables: { id: issued.id },
    });
    expect(r.errors).toBeUndefined();
    expect((await initialize({ authorization: `Bearer ${issued.key}` })).status).toBe(401);
  });

  it('shows a key without orders:create no tool, and its call is refused by the route (403 insufficient_scope)', async () => {
    const { client, tools } = await connectWith(await freshKey('read-only', ['orders:read']));
    expect(tools).toEqual([]);
    await acpErrorOf(
      call(client, 'create_checkout_session', {
        meta: meta(),
        payload: { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] },
      }),
      'insufficient_scope',
    );
  });

  it('shows a SPIFFE workload its /v2 tools and none of the ACP tools', async () => {
    const { client, tools } = await connect({ 'x-spiffe-id': AGENT });
    expect(tools.length).toBeGreaterThan(0);
    for (const name of FIVE) expect(tools.map((t) => t.name)).not.toContain(name);
    const r = await call(client, 'create_checkout_session', { meta: meta() });
    expect(r.isError).toBe(true);
  });

  it('audits each tool call once, by its ACP route, as the key’s identity proven by api-key', async () => {
    const spiffe = `${PLATFORM}/audited`;
    const { client } = await connectWith((await issueKey(sys, { spiffeId: spiffe })).key);
    const s = sessionOf(
      await call(client, 'create_checkout_session', {
        meta: meta(),
        payload: { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001' }] },
      }),
    );
    await call(client, 'get_checkout_session', { meta: meta(), id: s.id });
    await sys.platform.db.query('SELECT 1');
    let rows: { method: string; path: string; status: number; identity_source: string }[] = [];
    for (let i = 0; i < 200 && rows.length < 2; i++) {
      rows = await sys.platform.db.query<(typeof rows)[number]>(
        'SELECT method, path, status, identity_source FROM agent_audit_log WHERE identity = $1 ORDER BY seq',
        [spiffe],
      );
      if (rows.length < 2) await new Promise((r) => setTimeout(r, 10));
    }
    expect(rows).toEqual([
      { method: 'POST', path: '/acp/checkout_sessions', status: 201, identity_source: 'api-key' },
      { method: 'GET', path: '/acp/checkout_sessions/:id', status: 200, identity_source: 'api-key' },
    ]);
  });
});

describe('idempotency through the tools (meta.idempotency_key is the Idempotency-Key header)', () => {
  let client: Client;
  let key: string;
  const payload = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };
  beforeAll(async () => {
    key = await freshKey('idempotency');
    ({ client } = await connectWith(key));
  });

  it('replays the first session for the same key and payload, marked in _meta', async () => {
    const m = meta();
    const first = await call(client, 'create_checkout_session', { meta: m, payload });
    const again = await call(client, 'create_checkout_session', { meta: m, payload });
    expect(sessionOf(again)).toEqual(sessionOf(first));
    expect(httpMeta(first).idempotent_replayed).toBeUndefined();
    expect(httpMeta(again)).toMatchObject({ status: 201, idempotent_replayed: true });
  });

  it('shares keys with REST: the header replays what the tool created', async () => {
    const m = meta();
    const viaTool = sessionOf(await call(client, 'create_checkout_session', { meta: m, payload }));
    const viaRest = await acp(sys.url, key, 'POST', '/checkout_sessions', payload, {
      'idempotency-key': m.idempotency_key,
    });
    expect(viaRest.headers.get('idempotent-replayed')).toBe('true');
    expect(viaRest.body).toEqual(viaTool);
  });

  it('refuses the same key with another payload (idempotency_conflict)', async () => {
    const m = meta();
    sessionOf(await call(client, 'create_checkout_session', { meta: m, payload }));
    await acpErrorOf(
      call(client, 'create_checkout_session', {
        meta: m,
        payload: { ...payload, line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }] },
      }),
      'idempotency_conflict',
    );
  });

  it('requires the key on a POST tool, as the REST route requires the header', async () => {
    await acpErrorOf(
      call(client, 'create_checkout_session', { meta: { api_version: API_VERSION }, payload }),
      'idempotency_key_required',
    );
  });
});

describe('the block is shared with REST', () => {
  it('blocks the key’s identity after contract errors through the tools, over REST too', async () => {
    const key = await freshKey('blocked');
    const { client } = await connectWith(key);
    const bad = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 0 }] };
    for (let i = 0; i < 6; i++)
      await acpErrorOf(call(client, 'create_checkout_session', { meta: meta(), payload: bad }));
    await acpErrorOf(
      call(client, 'create_checkout_session', { meta: meta(), payload: bad }),
      'agent_blocked',
    );
    const rest = await acp(sys.url, key, 'POST', '/checkout_sessions', {
      ...bad,
      line_items: [{ id: 'SKU-ABC-000001' }],
    });
    expect(rest.status).toBe(429);
  });
});

describe('on the wire (JSON-RPC as the binding’s examples show it)', () => {
  let key: string;
  beforeAll(async () => {
    key = await freshKey('wire');
  });
  const rpc = async (id: number, body: string) => {
    const res = await fetch(`${sys.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${body}}`,
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, Record<string, unknown>>;
  };

  it('answers a refusal as {error: {code: -32000, message, data: Error}}, data the REST error', async () => {
    const reply = await rpc(
      7,
      `{"name":"create_checkout_session","arguments":{"meta":{"api_version":"${API_VERSION}","idempotency_key":"${freshIdem()}"},"payload":{"currency":"usd","capabilities":{},"line_items":[{"id":"SKU-ABC-000001","quantity":1.5}]}}}`,
    );
    const rest = await acp(
      sys.url,
      key,
      'POST',
      '/checkout_sessions',
      '{"currency":"usd","capabilities":{},"line_items":[{"id":"SKU-ABC-000001","quantity":1.5}]}',
    );
    expect(rest.status).toBe(400);
    expect(reply).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32000,
        message: rest.body.message,
        data: { ...rest.body, param: '$.payload.line_items[0].quantity' },
      },
    });
  });

  it('answers a success as a CallToolResult whose structuredContent is the session and whose text is the route’s body', async () => {
    const reply = await rpc(
      8,
      `{"name":"create_checkout_session","arguments":{"meta":{"api_version":"${API_VERSION}","idempotency_key":"${freshIdem()}"},"payload":{"currency":"usd","capabilities":{},"line_items":[{"id":"SKU-ABC-000001"}]}}}`,
    );
    const result = reply.result as { structuredContent: unknown; content: { type: string; text: string }[] };
    expectAcp('CheckoutSession', result.structuredContent);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
  });
});
