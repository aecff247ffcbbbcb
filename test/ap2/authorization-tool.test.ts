/**
 * The approval record over this system's own MCP server (issue 50; docs/ap2.md, "Over MCP"):
 * the get_order_authorization tool runs GET …/orders/{id}/authorization in process, so an order
 * completed with an AP2 mandate gives the same evidence over MCP as over REST, an instance of
 * the listed outputSchema (OrderAuthorization), verifiable offline from public keys; another
 * identity's order is the same 404; without orders:read the tool is not listed and a call is
 * refused with the route's 403; each call is audited like the REST read.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JSONWebKeySet, JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuthorizedOrder } from '../../gateway/agent/order/authorization-verify.ts';
import { problemOf } from '../mcp/support.ts';
import { accessToken } from '../procurement/support/agent.ts';
import { expectCheckout } from '../ucp/checkout.suite.ts';
import { ap2Platform, ap2World, auditOf, KID } from '../ucp/support/ap2.ts';
import { publicJwk } from '../ucp/support/sign.ts';

const w = ap2World();
const TOOL = 'get_order_authorization';
const clients: Client[] = [];

async function connect(spiffe: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${w.sys.url}/mcp`), {
    requestInit: { headers: { 'x-spiffe-id': spiffe, ...headers } },
  });
  const client = new Client({ name: 'authorization-tool-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  // The SDK client checks structuredContent against the outputSchema only once it has listed the tools.
  return { client, tools: (await client.listTools()).tools };
}
const call = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: TOOL, arguments: args })) as CallToolResult;
const httpStatus = (r: CallToolResult) =>
  (r._meta as Record<string, { status?: number }> | undefined)?.['agent-commerce.example/http']?.status;

const rest = async (spiffe: string, orderId: string) => {
  const res = await fetch(`${w.sys.url}/api/v2/procurement/orders/${orderId}/authorization`, {
    headers: { 'x-spiffe-id': spiffe },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

let owner: Awaited<ReturnType<typeof ap2Platform>>;
let orderId: string;
let mandate: string;

beforeAll(async () => {
  owner = await ap2Platform(w);
  const c = await owner.ready();
  mandate = await owner.mandate(c);
  const done = expectCheckout(await owner.complete(c.id, { checkout_mandate: mandate }));
  orderId = (done.order as { id: string }).id;
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

describe('get_order_authorization over MCP', () => {
  it('returns the owner the same evidence as REST, an instance of its outputSchema, verifiable offline', async () => {
    const { client, tools } = await connect(owner.spiffeId);
    const tool = tools.find((t: Tool) => t.name === TOOL);
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    const r = await call(client, { order_id: orderId });
    expect(r.isError).toBeFalsy();
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(tool?.outputSchema ?? {});
    expect(validate(r.structuredContent), ajv.errorsText(validate.errors)).toBe(true);
    const sha = createHash('sha256').update(mandate).digest('base64url');
    expect(r.structuredContent).toMatchObject({
      order_id: orderId,
      authorization: { type: 'ap2_checkout_mandate', checkout_mandate: mandate, mandate_sha256: sha },
    });
    // A thin edge: the REST read's body, field for field.
    const viaRest = await rest(owner.spiffeId, orderId);
    expect(viaRest.status).toBe(200);
    expect(r.structuredContent).toEqual(viaRest.body);
    // What the tool gave is enough to check the chain offline, from public keys only.
    const get = async (path: string) =>
      (await (
        await fetch(`${w.sys.url}${path}`, { headers: { 'x-spiffe-id': owner.spiffeId } })
      ).json()) as unknown;
    const verdict = await verifyAuthorizedOrder({
      proof: await get(`/api/v2/procurement/orders/${orderId}/audit-proof`),
      auditKeys: (await get('/.well-known/audit-keys.json')) as JSONWebKeySet,
      evidence: r.structuredContent as Record<string, unknown>,
      platformKeys: [publicJwk(w.platformKey, KID, 'ES256') as JWK],
      businessKeys: w.businessKeys,
    });
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    // Audited as the REST read is: the entry names the mandate's hash.
    const rows = await auditOf(w, owner.spiffeId, '/authorization', 2);
    expect(rows.filter((e) => e.reason?.includes(`sha-256 ${sha}`))).toHaveLength(2);
  });

  it("answers another identity's order with the route's 404, like an unknown one", async () => {
    const other = await ap2Platform(w);
    const { client } = await connect(other.spiffeId);
    const r = await call(client, { order_id: orderId });
    // The route's own 404 (not the toolbox's unknown-tool, which is a 404 too).
    const viaRest = await rest(other.spiffeId, orderId);
    expect(viaRest.status).toBe(404);
    expect(problemOf(r)).toMatchObject({ status: 404, type: viaRest.body.type, title: viaRest.body.title });
    expect(httpStatus(r)).toBe(404);
    const unknown = await call(client, { order_id: `ord_${'0'.repeat(32)}` });
    expect(problemOf(unknown)).toMatchObject({ status: 404, type: problemOf(r).type });
  });

  it('is hidden from a token without orders:read, and a call is refused with the route’s 403', async () => {
    const token = await accessToken(w.sys.config, { sub: owner.spiffeId, scope: 'orders:create' });
    const { client, tools } = await connect(owner.spiffeId, { authorization: `Bearer ${token}` });
    expect(tools.map((t) => t.name)).not.toContain(TOOL);
    const r = await call(client, { order_id: orderId });
    expect(problemOf(r)).toMatchObject({ status: 403 });
    expect(JSON.stringify(r)).not.toContain(mandate);
  });

  it('answers an id of another form with the route’s 404, not a read of some other path', async () => {
    const { client } = await connect(owner.spiffeId);
    const unknown = await rest(owner.spiffeId, `ord_${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    for (const id of [`${orderId}/../${orderId}`, orderId.toUpperCase(), 'chk_1']) {
      const r = await call(client, { order_id: id });
      expect(problemOf(r), id).toMatchObject({ status: 404, type: unknown.body.type });
      expect(JSON.stringify(r)).not.toContain(mandate);
    }
  });
});
