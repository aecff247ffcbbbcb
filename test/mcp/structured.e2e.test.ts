/**
 * The tools as the MCP spec (2025-06-18 and later) describes a tool, tried with the SDK's own
 * Client over Streamable HTTP against the embedded system: each lists a title, annotations and
 * an outputSchema taken from its operation's success reply in the OpenAPI document; each
 * success result's structuredContent is an instance of that schema (the SDK client checks it
 * and throws otherwise; checked again here with Ajv in JSON Schema 2020-12, the spec's default
 * dialect); a refusal keeps its problem+json as text; and an order that waits for a human says
 * so in its structured result and its text, and can be cancelled.
 */

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { componentSchema } from '../../subgraphs/procurement/contract/openapi.ts';
import { AGENT, freshAgent, validOrder } from '../procurement/support/agent.ts';
import { setApprovalPolicy } from '../procurement/support/spend.ts';
import { problemOf, textOf } from './support.ts';

const SCOPES = ['catalog:read', 'orders:create', 'orders:read', 'orders:cancel', 'spend:read'];
let sys: TestSystem;
const clients: Client[] = [];

const edgeSchema = (name: string) =>
  parse(readFileSync(new URL('../../schemas/openapi/edge.yaml', import.meta.url), 'utf8')).components.schemas[
    name
  ] as Record<string, unknown>;

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };
/** Each tool: its title, its hints, and the OpenAPI schema of its success reply. */
const TOOLS: ReadonlyArray<
  readonly [name: string, title: string, hints: Record<string, boolean>, reply: () => Record<string, unknown>]
> = [
  ['quote_cart', 'Quote a cart', READ_ONLY, () => edgeSchema('CartQuote')],
  [
    'place_purchase_order',
    'Place a purchase order',
    { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    () => componentSchema('PurchaseOrderResponse'),
  ],
  ['get_order', 'Read an order', READ_ONLY, () => componentSchema('PurchaseOrderResponse')],
  ['list_orders', 'List own orders', READ_ONLY, () => componentSchema('OrderList')],
  [
    'cancel_order',
    'Cancel an order',
    { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    () => componentSchema('PurchaseOrderResponse'),
  ],
  [
    'get_order_authorization',
    "Read an order's authorization evidence",
    READ_ONLY,
    () => componentSchema('OrderAuthorization'),
  ],
  ['get_spend', 'Read own spend policy and budget', READ_ONLY, () => componentSchema('SpendStatus')],
  ['search_products', 'Search products', READ_ONLY, () => componentSchema('ProductSearch')],
  ['get_product_details', 'Read a product', READ_ONLY, () => componentSchema('ProductDetail')],
];

/** An SDK client that has listed the tools: only then does it check structuredContent. */
async function connect(
  spiffe: string,
  fetchOverride?: typeof fetch,
): Promise<{ client: Client; tools: Tool[] }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${sys.url}/mcp`), {
    requestInit: { headers: { 'x-spiffe-id': spiffe } },
    ...(fetchOverride ? { fetch: fetchOverride } : {}),
  });
  const client = new Client({ name: 'structured-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, tools: (await client.listTools()).tools };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const httpMeta = (r: CallToolResult) =>
  (r._meta as Record<string, Record<string, unknown>> | undefined)?.['agent-commerce.example/http'] ?? {};

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats.default(ajv);
const validators = new Map<string, ValidateFunction>();
function validatorFor(tool: Tool | undefined): ValidateFunction {
  if (!tool?.outputSchema) throw new Error(`${tool?.name ?? 'tool'} lists no outputSchema`);
  const known = validators.get(tool.name);
  if (known) return known;
  const v = ajv.compile(tool.outputSchema);
  validators.set(tool.name, v);
  return v;
}

/** A success result: structured, an instance of the listed outputSchema, and the same JSON as its text. */
function expectValid(tools: Tool[], name: string, r: CallToolResult): Record<string, unknown> {
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(r.structuredContent).toBeDefined();
  const validate = validatorFor(tools.find((t) => t.name === name));
  expect(validate(r.structuredContent), ajv.errorsText(validate.errors)).toBe(true);
  const first = r.content[0];
  expect(JSON.parse(first?.type === 'text' ? first.text : 'null')).toEqual(r.structuredContent);
  return r.structuredContent as Record<string, unknown>;
}

beforeAll(async () => {
  sys = await startEmbedded({
    AGENT_SCOPE_POLICY: JSON.stringify({ [AGENT]: SCOPES }),
    // Not the defaults: the order tool's description must state the bucket this process runs.
    RATE_LIMIT_CAPACITY: '37',
    RATE_LIMIT_REFILL_PER_SECOND: '19',
  });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await sys.close();
});

describe('tools/list describes each tool as the spec does', () => {
  let tools: Tool[];
  beforeAll(async () => {
    tools = (await connect(freshAgent('list'))).tools;
  });

  it('lists every tool of the table, and no other', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map(([name]) => name).sort());
  });

  it.each(TOOLS)('gives %s the title %j and its hints', (name, title, hints) => {
    const tool = tools.find((t) => t.name === name);
    expect(tool?.title).toBe(title);
    expect(tool?.annotations).toEqual({ title, ...hints });
  });

  it.each(TOOLS)('gives %s an outputSchema taken from its success reply', (name, _title, _hints, reply) => {
    const out = tools.find((t) => t.name === name)?.outputSchema as Record<string, unknown> | undefined;
    const doc = reply();
    expect(out?.type).toBe('object');
    expect(out?.required).toEqual(doc.required);
    expect(Object.keys((out?.properties as object | undefined) ?? {})).toEqual(
      Object.keys(doc.properties as object),
    );
    expect(out?.additionalProperties).toBe(doc.additionalProperties);
    expect(out?.description).toBe(doc.description);
    // A JSON Schema, not an OpenAPI fragment: no $ref left to a document the client lacks.
    expect(JSON.stringify(out)).not.toContain('$ref');
  });

  it('accepts an exact amount such as 4999.99, which a fractional multipleOf refuses in binary floating point', () => {
    const validate = validatorFor(tools.find((t) => t.name === 'get_order'));
    const order = { status: 'APPROVED', order_id: `ord_${'0'.repeat(32)}`, processed_at: 1 };
    expect(validate({ ...order, allocated_budget: 4999.99 }), ajv.errorsText(validate.errors)).toBe(true);
    // The document's bounds still hold.
    expect(validate({ ...order, allocated_budget: 5000.01 })).toBe(false);
  });

  it("tells a model the order tool's limits, budget rules and approval path", () => {
    const text = tools.find((t) => t.name === 'place_purchase_order')?.description ?? '';
    for (const fact of [
      /quantity: integer from 1 to 100/,
      /at most 5000, a multiple of 0\.01/,
      /never rounded/,
      /idempotency_key \(optional/,
      /same key with other arguments is refused/,
      /more than 5 contract errors in a row .* block your identity for 15 minutes/,
      // The running configuration's bucket, not a number typed into the description.
      new RegExp(
        `Rate limit: a burst of ${sys.config.RATE_LIMIT_CAPACITY} calls, refilled at ${sys.config.RATE_LIMIT_REFILL_PER_SECOND} per second`,
      ),
      /202 PENDING_APPROVAL/,
      /approval_above/,
      /expires_at/,
      /get_order/,
      /cancel_order/,
    ])
      expect(text).toMatch(fact);
  });
});

describe('every tool result is an instance of its outputSchema', () => {
  let client: Client;
  let tools: Tool[];
  let orderId: string;
  beforeAll(async () => {
    ({ client, tools } = await connect(freshAgent('structured')));
  });

  // In order: the order placed here is read, listed and cancelled by the cases after it.
  const CALLS: ReadonlyArray<readonly [name: string, args: () => Record<string, unknown>]> = [
    [
      'quote_cart',
      () => ({ line: ['SKU-ABC-000001:2', 'SKU-ABC-000002:1'], currency: 'USD', region: 'us-east' }),
    ],
    [
      'place_purchase_order',
      () => ({ ...validOrder({ max_budget_usd: 4999.99 }), idempotency_key: 'structured-1' }),
    ],
    ['get_order', () => ({ order_id: orderId })],
    ['get_order_authorization', () => ({ order_id: orderId })],
    ['list_orders', () => ({ limit: 5 })],
    ['cancel_order', () => ({ order_id: orderId })],
    ['get_spend', () => ({})],
    ['search_products', () => ({ q: 'ergnomic chair', category: ['office'], max_price: '400', limit: 3 })],
    ['get_product_details', () => ({ product_id: 'SKU-ABC-000001' })],
  ];
  it('covers every tool', () => {
    expect(CALLS.map(([name]) => name).sort()).toEqual(TOOLS.map(([name]) => name).sort());
  });

  it.each(CALLS)('%s', async (name, args) => {
    // The SDK client throws on a structuredContent that is not an instance of the outputSchema.
    const out = expectValid(tools, name, await call(client, name, args()));
    if (name === 'place_purchase_order') orderId = String(out.order_id);
    if (name === 'list_orders') expect((out.orders as unknown[]).length).toBeGreaterThan(0);
    if (name === 'cancel_order') expect(out.status).toBe('CANCELLED');
    if (name === 'search_products') expect(out.corrected_query).toBe('ergonomic chair');
    if (name === 'get_product_details') expect(out.selected_sku).toBe('SKU-ABC-000001');
  });

  it('is checked by the SDK client itself: a listing whose schema the result breaks makes callTool throw', async () => {
    // The same server, seen through a fetch that makes get_spend's schema require a field no
    // reply has. Proves the client checks structuredContent, so the cases above are no formality.
    const tampering: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const body = typeof init?.body === 'string' ? init.body : '';
      if (!body.includes('"tools/list"')) return res;
      const json = (await res.json()) as { result: { tools: Tool[] } };
      for (const t of json.result.tools)
        if (t.outputSchema)
          t.outputSchema.required = [...(t.outputSchema.required ?? []), 'not_in_any_reply'];
      return new Response(JSON.stringify(json), { status: res.status, headers: res.headers });
    };
    const { client: c } = await connect(freshAgent('tampered'), tampering);
    await expect(c.callTool({ name: 'get_spend', arguments: {} })).rejects.toThrow(/output schema/);
  });

  it('keeps a refusal as problem+json text, without structuredContent, and the SDK client takes it', async () => {
    const r = await call(client, 'place_purchase_order', validOrder({ quantity: 0 }));
    const problem = problemOf(r);
    expect(problem).toMatchObject({ status: 422 });
    expect(String(problem.type)).toMatch(/\/validation-error$|\/invalid|contract/);
    expect(problem.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ pointer: '/quantity' })]),
    );
    expect(httpMeta(r).status).toBe(422);
  });
});

describe('an order that waits for a human approval', () => {
  let client: Client;
  let tools: Tool[];
  let id: string;
  beforeAll(async () => {
    id = freshAgent('approval');
    await setApprovalPolicy(sys, await sys.token(['spend:admin']), id);
    ({ client, tools } = await connect(id));
  });
  const spent = async () => {
    const s = expectValid(tools, 'get_spend', await call(client, 'get_spend', {}));
    return (s.current_period as { spent: string }).spent;
  };

  it('is PENDING_APPROVAL in structuredContent, says so in its text, and is cancelled by cancel_order', async () => {
    const r = await call(client, 'place_purchase_order', validOrder({ max_budget_usd: 150 }));
    const order = expectValid(tools, 'place_purchase_order', r);
    expect(order).toMatchObject({ status: 'PENDING_APPROVAL', allocated_budget: 150 });
    expect(Date.parse(String(order.expires_at))).toBeGreaterThan(Date.now());
    expect(httpMeta(r)).toMatchObject({ status: 202, pending_approval: true });
    expect(textOf(r)).toContain(
      `Order ${order.order_id} waits for a human approval (PENDING_APPROVAL) until ${order.expires_at}`,
    );
    expect(textOf(r)).toMatch(/it is not approved/);
    expect(await spent()).toBe('150.00');

    const read = await call(client, 'get_order', { order_id: order.order_id });
    expect(expectValid(tools, 'get_order', read)).toEqual(order);
    expect(textOf(read)).toMatch(/waits for a human approval/);

    const cancelled = await call(client, 'cancel_order', { order_id: order.order_id });
    expect(expectValid(tools, 'cancel_order', cancelled)).toMatchObject({
      order_id: order.order_id,
      status: 'CANCELLED',
    });
    expect(textOf(cancelled)).not.toMatch(/waits for/);
    expect(await spent()).toBe('0.00');
  });

  it('places an order at or below approvalAbove at once, without the words', async () => {
    const r = await call(client, 'place_purchase_order', validOrder({ max_budget_usd: 100 }));
    expect(expectValid(tools, 'place_purchase_order', r)).toMatchObject({ status: 'APPROVED' });
    expect(httpMeta(r).status).toBe(201);
    expect(httpMeta(r).pending_approval).toBeUndefined();
    expect(textOf(r)).not.toMatch(/waits for/);
  });
});
