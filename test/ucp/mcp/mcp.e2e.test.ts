/**
 * UCP's MCP binding (checkout-mcp.md at v2026-04-08) end to end: the MCP SDK's own Client over
 * Streamable HTTP against the embedded system, as a UCP platform with a checkout API key calls it
 * (its MCP request names its profile in a UCP-Agent header; each tool call in meta["ucp-agent"]).
 * The five tools run the UCP REST routes in process; every result is validated against the
 * vendored schemas.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  UCP_ADDRESS,
} from '../../../harness/ucp-platform.ts';
import { API_VERSION, issueKey } from '../../acp/support/acp.ts';
import { expectUcp } from '../support/validate.ts';

const FIVE = ['create_checkout', 'get_checkout', 'update_checkout', 'complete_checkout', 'cancel_checkout'];
/** The catalog's three (catalog/mcp.md), listed before checkout's. */
const CATALOG = ['search_catalog', 'lookup_catalog', 'get_product'];
/** The cart's four (cart-mcp.md), listed after checkout's. */
const CART = ['create_cart', 'get_cart', 'update_cart', 'cancel_cart'];
const ITEM = 'SKU-ABC-000001';

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
const clients: Client[] = [];
let platforms = 0;

beforeAll(async () => {
  sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true' });
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({
      capabilities: [
        'checkout',
        'order',
        'discount',
        'fulfillment',
        'cart',
        'catalog.search',
        'catalog.lookup',
      ],
    }),
  );
}, 120_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await profiles?.close();
  await sys?.close();
});

async function connect(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${sys.url}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'ucp-platform', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/**
 * A platform of its own (key bound to the profile server's origin, identity) connected as a UCP
 * platform; `header: false` connects as one that knows only the binding (no UCP-Agent header).
 */
async function platform(scopes?: string[], { header = true } = {}): Promise<Client> {
  const { key } = await issueKey(sys, {
    spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-mcp-${++platforms}`,
    agentId: `agent-ucp-mcp-${platforms}-${process.pid}`,
    ucpProfile: profiles.origin,
    ...(scopes ? { scopes } : {}),
  });
  return connect({
    authorization: `Bearer ${key}`,
    ...(header ? { 'ucp-agent': `profile="${profileUrl}"` } : {}),
  });
}

const meta = (idempotent = false, profile = profileUrl) => ({
  'ucp-agent': { profile },
  ...(idempotent ? { 'idempotency-key': randomUUID() } : {}),
});
const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as CallToolResult;
type Checkout = { id: string; status: string; order?: { id: string }; messages?: { code?: string }[] };
const checkoutOf = (r: CallToolResult): Checkout => {
  expect(r.isError).toBeFalsy();
  expectUcp('checkout_with_discount_and_fulfillment', r.structuredContent);
  // The same JSON as text, as the binding's examples show.
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent as Checkout;
};
const jsonRpcError = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(McpError);
  return e as McpError & { data?: { code?: string; status?: number } };
};

describe('UCP cart tools on /mcp', () => {
  it('create, get, update and cancel a cart as the REST routes do; a cart converts to a checkout', async () => {
    const c = await platform();
    const cartOf = (r: CallToolResult) => {
      expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
      expectUcp('cart', r.structuredContent);
      return r.structuredContent as { id: string; line_items: { quantity: number }[] };
    };
    const created = cartOf(
      await call(c, 'create_cart', {
        meta: meta(),
        cart: { line_items: [{ item: { id: ITEM }, quantity: 2 }] },
      }),
    );
    expect(cartOf(await call(c, 'get_cart', { meta: meta(), id: created.id }))).toEqual(created);
    const updated = cartOf(
      await call(c, 'update_cart', {
        meta: meta(),
        id: created.id,
        cart: { line_items: [{ item: { id: ITEM }, quantity: 3 }] },
      }),
    );
    expect(updated.line_items[0]?.quantity).toBe(3);
    const checkout = checkoutOf(
      await call(c, 'create_checkout', { meta: meta(), checkout: { cart_id: created.id, line_items: [] } }),
    );
    expect(checkout.status).toBe('incomplete');
    // The binding's rules: no id inside the cart, an idempotency key to cancel.
    const e = await jsonRpcError(
      call(c, 'update_cart', { meta: meta(), id: created.id, cart: { id: created.id, line_items: [] } }),
    );
    expect(e.code).toBe(-32602);
    await jsonRpcError(call(c, 'cancel_cart', { meta: meta(false), id: created.id }));
    expect(cartOf(await call(c, 'cancel_cart', { meta: meta(true), id: created.id }))).toEqual(updated);
    const gone = await jsonRpcError(call(c, 'get_cart', { meta: meta(), id: created.id }));
    expect(gone.data).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('UCP tools on /mcp', () => {
  it('lists the catalog tools of catalog/mcp.md and the five checkout tools of checkout-mcp.md to a key with UCP-Agent, meta required', async () => {
    const c = await platform();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual([...CATALOG, ...FIVE, ...CART]);
    for (const t of tools) {
      expect(t.inputSchema.required).toContain('meta');
      const m = (t.inputSchema.properties as { meta: { required: string[] } }).meta;
      expect(m.required).toEqual(
        t.name === 'complete_checkout' || t.name === 'cancel_checkout' || t.name === 'cancel_cart'
          ? ['ucp-agent', 'idempotency-key']
          : ['ucp-agent'],
      );
    }
  });

  it('an unbound key without a UCP-Agent header sees the ACP tools only, as before', async () => {
    const { key } = await issueKey(sys, {
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/ucp-mcp-acp',
    });
    const c = await connect({ authorization: `Bearer ${key}` });
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain('create_checkout_session');
    expect(names).not.toContain('create_checkout');
  });

  it('a key bound to a UCP profile sees the UCP tools without the header, besides the ACP ones', async () => {
    const c = await platform(undefined, { header: false });
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names.slice(0, 12)).toEqual([...CATALOG, ...FIVE, ...CART]);
    expect(names.slice(12)).toEqual([
      'create_checkout_session',
      'get_checkout_session',
      'update_checkout_session',
      'complete_checkout_session',
      'cancel_checkout_session',
    ]);
    // meta["ucp-agent"] alone names the profile, as checkout-mcp.md has it.
    const created = checkoutOf(
      await call(c, 'create_checkout', {
        meta: meta(),
        checkout: { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      }),
    );
    expect(checkoutOf(await call(c, 'get_checkout', { meta: meta(), id: created.id })).id).toBe(created.id);
    // The ACP tools of the same listing reach the ACP routes: an ACP session, not a UCP checkout.
    const acp = await call(c, 'create_checkout_session', {
      meta: { api_version: API_VERSION, idempotency_key: randomUUID() },
      payload: { currency: 'usd', capabilities: {}, line_items: [{ id: ITEM, quantity: 1 }] },
    });
    expect(acp.isError).toBeFalsy();
    expect(acp.structuredContent).toMatchObject({ status: 'ready_for_payment', currency: 'usd' });
    expect((acp.structuredContent as { id: string }).id).not.toBe(created.id);
    // The listing does not widen the binding: a profile on another origin is still refused (a
    // profile-related error: -32001, docs/mcp.md "UCP tools").
    const e = await jsonRpcError(
      call(c, 'create_checkout', {
        meta: meta(false, 'https://other-platform.example/profile.json'),
        checkout: { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      }),
    );
    expect([e.code, e.data?.status, e.data?.code]).toEqual([-32001, 403, 'profile_not_trusted']);
  });

  it('creates, reads, updates and completes a checkout through the REST routes (structuredContent)', async () => {
    const c = await platform();
    const created = checkoutOf(
      await call(c, 'create_checkout', {
        meta: meta(),
        checkout: {
          line_items: [{ item: { id: ITEM }, quantity: 2 }],
          fulfillment: { methods: [{ type: 'shipping', destinations: [UCP_ADDRESS] }] },
        },
      }),
    );
    expect(created.id).toMatch(/^cs_/);
    expect(checkoutOf(await call(c, 'get_checkout', { meta: meta(), id: created.id })).id).toBe(created.id);
    const ready = checkoutOf(
      await call(c, 'update_checkout', {
        meta: meta(),
        id: created.id,
        checkout: {
          line_items: [{ item: { id: ITEM }, quantity: 2 }],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        },
      }),
    );
    expect(ready.status).toBe('ready_for_complete');
    const args = {
      meta: meta(true),
      id: created.id,
      checkout: {
        payment: purchaseOrderPayment('PO-MCP-1'),
      },
    };
    const done = checkoutOf(await call(c, 'complete_checkout', args));
    expect(done.status).toBe('completed');
    expect(done.order?.id).toMatch(/^ord_/);
    // The same idempotency key and arguments: the first answer again, no second order.
    expect(checkoutOf(await call(c, 'complete_checkout', args)).order?.id).toBe(done.order?.id);
  });

  it('cancels with an idempotency key; without one it is Invalid params (-32602), no route reached', async () => {
    const c = await platform();
    const created = checkoutOf(
      await call(c, 'create_checkout', {
        meta: meta(),
        checkout: { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      }),
    );
    const e = await jsonRpcError(call(c, 'cancel_checkout', { meta: meta(false), id: created.id }));
    expect(e.code).toBe(-32602);
    expect(checkoutOf(await call(c, 'get_checkout', { meta: meta(), id: created.id })).status).not.toBe(
      'canceled',
    );
    expect(checkoutOf(await call(c, 'cancel_checkout', { meta: meta(true), id: created.id })).status).toBe(
      'canceled',
    );
  });

  it('answers a business outcome as a result (error_response), not a JSON-RPC error', async () => {
    const c = await platform();
    const r = await call(c, 'create_checkout', {
      meta: meta(),
      checkout: { line_items: [{ item: { id: 'SKU-ZZZ-999999' }, quantity: 1 }] },
    });
    expect(r.isError).toBeFalsy();
    expectUcp('error_response', r.structuredContent);
    expect((r.structuredContent as { ucp: { status: string } }).ucp.status).toBe('error');
  });

  it.each([
    ['a profile that cannot be fetched', () => `${profiles.origin}/gone.json`, -32001, 'profile_unreachable'],
    ['a profile URL that is not one', () => 'not a url', -32001, 'invalid_profile_url'],
  ])('answers %s with the JSON-RPC discovery error and UCP code', async (_w, profile, code, ucpCode) => {
    const c = await platform();
    const e = await jsonRpcError(
      call(c, 'create_checkout', {
        meta: meta(false, profile()),
        checkout: { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      }),
    );
    expect([e.code, e.data?.code]).toEqual([code, ucpCode]);
  });

  it.each([
    ['no meta', { checkout: { line_items: [] } }],
    ['no ucp-agent profile', { meta: {}, checkout: { line_items: [] } }],
    [
      'an id inside checkout',
      {
        meta: { 'ucp-agent': { profile: 'https://p.example/x' } },
        id: 'cs_1',
        checkout: { id: 'cs_1', line_items: [] },
      },
    ],
    [
      'an unknown argument',
      { meta: { 'ucp-agent': { profile: 'https://p.example/x' } }, id: 'cs_1', extra: 1 },
    ],
  ])('refuses %s as Invalid params (-32602)', async (_w, args) => {
    const c = await platform();
    const name = 'id' in args ? 'update_checkout' : 'create_checkout';
    const e = await jsonRpcError(call(c, name, args as Record<string, unknown>));
    expect(e.code).toBe(-32602);
  });

  it('a key without orders:create sees the catalog tools only, and a checkout call is refused by the route (403, -32000)', async () => {
    const c = await platform(['orders:read']);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(CATALOG);
    const e = await jsonRpcError(
      call(c, 'create_checkout', {
        meta: meta(),
        checkout: { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      }),
    );
    expect([e.code, e.data?.status]).toEqual([-32000, 403]);
  });
});

describe('UCP catalog tools on /mcp', () => {
  it('searches, looks up and gets a product, each result valid against the release, then checks the item out', async () => {
    const c = await platform();
    const found = await call(c, 'search_catalog', {
      meta: meta(),
      catalog: { query: 'drill', context: { address_country: 'US' }, pagination: { limit: 3 } },
    });
    expect(found.isError).toBeFalsy();
    expectUcp('catalog_search_response', found.structuredContent);
    const products = (found.structuredContent as { products: { id: string; variants: { id: string }[] }[] })
      .products;
    expect(products.length).toBeGreaterThan(0);
    const first = products[0] as { id: string; variants: { id: string }[] };
    const looked = await call(c, 'lookup_catalog', { meta: meta(), catalog: { ids: [first.id] } });
    expectUcp('catalog_lookup_response', looked.structuredContent);
    const detail = await call(c, 'get_product', { meta: meta(), catalog: { id: first.id } });
    expectUcp('catalog_get_product_response', detail.structuredContent);
    const created = checkoutOf(
      await call(c, 'create_checkout', {
        meta: meta(),
        checkout: { line_items: [{ item: { id: first.variants[0]?.id }, quantity: 1 }] },
      }),
    );
    expect(created.status).not.toBe('canceled');
  });

  it("answers a search without query or filter with the route's 400 as a JSON-RPC error", async () => {
    const c = await platform();
    const e = await jsonRpcError(call(c, 'search_catalog', { meta: meta(), catalog: {} }));
    expect([e.code, e.data?.status, e.data?.code]).toEqual([-32000, 400, 'invalid_request']);
  });

  it('refuses a catalog tool without its catalog argument (-32602)', async () => {
    const c = await platform();
    const e = await jsonRpcError(call(c, 'search_catalog', { meta: meta() }));
    expect(e.code).toBe(-32602);
  });
});
