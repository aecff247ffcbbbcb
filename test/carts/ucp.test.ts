/**
 * UCP's cart capability (cart.md, cart-rest.md, v2026-04-08) on the embedded system, as a
 * platform that knows only the specification uses it: the profile declares
 * `dev.ucp.shopping.cart`; create, get, update, cancel answer carts valid against the vendored
 * cart.json, priced exactly as GET /cart/quote (property); items by SKU or by the merchant's
 * feed ids; conversion by `cart_id` (one incomplete checkout per cart, a completed one clears the
 * cart); a cart holds no stock and spends no budget; hostile input is 4xx, nothing stored.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  totalsOf,
  type UcpReply,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectUcp } from '../ucp/support/validate.ts';

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let bareUrl: string;
let platforms = 0;
const A = 'SKU-ABC-000001';
const B = 'SKU-ELC-000004';
const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';

const stored = async () =>
  Number((await sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM carts'))[0]?.n);

/** A platform of its own (its identity, agent id, key, budget and block). */
async function platform(policy?: Record<string, string>) {
  const n = ++platforms;
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-cart-${n}`;
  const agentId = `agent-ucp-cart-${n}-${process.pid}`;
  if (policy) {
    const r = await sys.gql(SET, {
      token: await sys.token(['spend:admin']),
      variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
    });
    expect(r.errors).toBeUndefined();
  }
  const { key } = await issueKey(sys, { spiffeId, agentId, ucpProfile: profiles.origin });
  const call = (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    headers?: Record<string, string | null>,
  ) => ucpCall(sys.url, { key, profileUrl }, method, path, body, headers);
  return { key, agentId, call };
}

type Cart = Record<string, unknown> & { id: string };

/** A cart answer: the status, and a body valid against the vendored cart.json. */
function expectCart(r: UcpReply, status = 200): Cart {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  expectUcp('cart', r.body);
  expect(r.body.currency).toBe('USD');
  return r.body as Cart;
}

/** A protocol error: the status and `{code, content}`. */
function expectError(r: UcpReply, status: number, code: string, path?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, content: expect.any(String) });
  expect(r.body.path).toBe(path);
}

/** GET /cart/quote's totals for the same items, in cents, as `customerId`. */
async function quoteOf(items: { id: string; quantity: number }[], customerId: string) {
  const q = new URLSearchParams([
    ['currency', 'USD'],
    ['region', 'US'],
    ['customerId', customerId],
  ]);
  for (const it of items) q.append('line', `${it.id}:${it.quantity}`);
  const quote = (await (await fetch(`${sys.url}/cart/quote?${q}`)).json()) as {
    subtotal: number;
    total: number;
  };
  return { subtotal: Math.round(quote.subtotal * 100), total: Math.round(quote.total * 100) };
}

const lines = (...items: [string, number][]) => ({
  line_items: items.map(([id, quantity]) => ({ item: { id }, quantity })),
});

const completeBody = {
  payment: purchaseOrderPayment('PO-CART-1'),
};

beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
  });
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({ capabilities: ['checkout', 'order', 'cart'] }),
  );
  bareUrl = profiles.set('/bare.json', platformProfile({ capabilities: ['checkout', 'order'] }));
}, 240_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

describe('the UCP cart capability', () => {
  it('is declared in /.well-known/ucp', async () => {
    const profile = (await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as Record<string, unknown>;
    expectUcp('business_profile', profile);
    expect(
      (profile.ucp as { capabilities: Record<string, unknown> }).capabilities['dev.ucp.shopping.cart'],
    ).toEqual([
      {
        version: '2026-04-08',
        spec: 'https://ucp.dev/2026-04-08/specification/cart',
        schema: 'https://ucp.dev/2026-04-08/schemas/shopping/cart.json',
      },
    ]);
  });

  it('creates, reads, replaces and cancels a cart; totals are the quote’s to the cent', async () => {
    const p = await platform();
    const body = { ...lines([A, 2], [B, 1]), context: { address_country: 'US', postal_code: '94105' } };
    expectUcp('cart', body, { request: 'create' });
    const created = expectCart(await p.call('POST', '/carts', body), 201);
    expect(created.id).toMatch(/^cart_[0-9a-f]{32}$/);
    expect(created.context).toEqual(body.context);
    const q = await quoteOf(
      [
        { id: A, quantity: 2 },
        { id: B, quantity: 1 },
      ],
      p.agentId,
    );
    expect(totalsOf(created)).toMatchObject({ subtotal: q.subtotal, total: q.total });
    expect(expectCart(await p.call('GET', `/carts/${created.id}`))).toEqual(created);
    const update = { id: created.id, ...lines([A, 3]) };
    expectUcp('cart', update, { request: 'update' });
    const replaced = expectCart(await p.call('PUT', `/carts/${created.id}`, update));
    expect(totalsOf(replaced).total).toBe((await quoteOf([{ id: A, quantity: 3 }], p.agentId)).total);
    expect(replaced.context).toEqual(body.context);
    expect(expectCart(await p.call('POST', `/carts/${created.id}/cancel`))).toEqual(replaced);
    expectError(await p.call('GET', `/carts/${created.id}`), 404, 'not_found');
    expectError(
      await p.call('PUT', `/carts/${created.id}`, { id: created.id, ...lines([A, 1]) }),
      404,
      'not_found',
    );
    expectError(await p.call('POST', `/carts/${created.id}/cancel`), 404, 'not_found');
  });

  it('replays a create under the same Idempotency-Key, and refuses another body under it (409)', async () => {
    const p = await platform();
    const headers = { 'idempotency-key': `ucp-cart-idem-${process.pid}` };
    const first = expectCart(await p.call('POST', '/carts', lines([A, 1]), headers), 201);
    const again = await p.call('POST', '/carts', lines([A, 1]), headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(expectCart(again, 201).id).toBe(first.id);
    expectError(await p.call('POST', '/carts', lines([A, 2]), headers), 409, 'idempotency_conflict');
  });

  it('shows unknown items as messages; a cart of nothing buyable is the spec’s error_response, not stored', async () => {
    const p = await platform();
    const mixed = expectCart(await p.call('POST', '/carts', lines([A, 1], ['pink_wumpus', 1])), 201);
    expect(mixed.messages).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'not_found',
        path: '$.line_items[1]',
        severity: 'recoverable',
      }),
    ]);
    const before = await stored();
    const refused = await p.call('POST', '/carts', lines(['pink_wumpus', 1], ['SKU-ZZZ-999999', 2]));
    expect(refused.status).toBe(200);
    expectUcp('error_response', refused.body);
    expect(refused.body.id).toBeUndefined();
    expect(
      (refused.body.messages as { code: string; severity: string }[]).map((m) => [m.code, m.severity]),
    ).toEqual([
      ['not_found', 'unrecoverable'],
      ['not_found', 'unrecoverable'],
    ]);
    expect(await stored()).toBe(before);
  });

  it('takes the merchant’s feed ids as items, and an item on several lines', async () => {
    const p = await platform();
    const id = 'cart-lamp-brass';
    await importFeed(id);
    const c = expectCart(await p.call('POST', '/carts', lines([id, 2], [A, 1], [A, 2])), 201);
    const items = c.line_items as { item: { id: string; price: number }; quantity: number }[];
    expect(items[0]).toMatchObject({ item: { id, price: 18900 }, quantity: 2 });
    expect(items.map((l) => l.quantity)).toEqual([2, 1, 2]);
    expect(totalsOf(c).total).toBe(2 * 18900 + (await quoteOf([{ id: A, quantity: 3 }], p.agentId)).total);
  });

  it("is another platform's 404 for every operation, and conversion too; the cart stays as it was", async () => {
    const mine = await platform();
    const other = await platform();
    const c = expectCart(await mine.call('POST', '/carts', lines([A, 1])), 201);
    expectError(await other.call('GET', `/carts/${c.id}`), 404, 'not_found');
    expectError(await other.call('PUT', `/carts/${c.id}`, { id: c.id, ...lines([A, 9]) }), 404, 'not_found');
    expectError(await other.call('POST', `/carts/${c.id}/cancel`), 404, 'not_found');
    expectError(
      await other.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] }),
      404,
      'not_found',
      '$.cart_id',
    );
    expect(expectCart(await mine.call('GET', `/carts/${c.id}`))).toEqual(c);
  });

  it('needs the capability in the platform profile', async () => {
    const p = await platform();
    const bare = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      ucpCall(sys.url, { key: p.key, profileUrl: bareUrl }, method, path, body);
    const r = await bare('POST', '/carts', lines([A, 1]));
    expect(r.status).toBe(200);
    expect(r.body.messages).toEqual([expect.objectContaining({ code: 'capabilities_incompatible' })]);
    expectError(
      await bare('POST', '/checkout-sessions', { cart_id: 'cart_x', line_items: [] }),
      400,
      'invalid',
      '$.cart_id',
    );
  });
});

describe('cart to checkout', () => {
  it('takes the cart’s contents, ignores the request’s, and answers the incomplete checkout again', async () => {
    const p = await platform();
    const c = expectCart(
      await p.call('POST', '/carts', { ...lines([A, 2], [B, 1]), buyer: { email: 'b@example.com' } }),
      201,
    );
    const body = { cart_id: c.id, ...lines([B, 7]), buyer: { email: 'other@example.com' } };
    expectUcp('checkout_with_cart', body, { request: 'create' });
    const first = await p.call('POST', '/checkout-sessions', body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expectUcp('checkout', first.body);
    const items = (first.body.line_items as { item: { id: string }; quantity: number }[]).map((l) => [
      l.item.id,
      l.quantity,
    ]);
    expect(items).toEqual([
      [A, 2],
      [B, 1],
    ]);
    expect(first.body.buyer).toEqual({ email: 'b@example.com' });
    expect(totalsOf(first.body).total).toBe(totalsOf(c).total);
    const again = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
  });

  it('a cart whose checkout was completed is cleared: not_found for conversion and for the cart', async () => {
    const p = await platform();
    const c = expectCart(await p.call('POST', '/carts', lines([A, 1])), 201);
    const s = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
    expect(s.status).toBe(201);
    const done = await p.call('POST', `/checkout-sessions/${s.body.id}/complete`, completeBody);
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    expectError(
      await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] }),
      404,
      'not_found',
      '$.cart_id',
    );
    expectError(await p.call('GET', `/carts/${c.id}`), 404, 'not_found');
  });

  it('a cart spends no budget and holds no stock', async () => {
    // Stock of A, and a budget just above one unit of A: carts far above both change nothing.
    const stock = await sys.gql('query($skus: [ID!]!) { products(skus: $skus) { inventoryLevel } }', {
      variables: { skus: [A] },
    });
    const units = ((stock.data?.products ?? []) as { inventoryLevel: number }[])[0]?.inventoryLevel ?? 0;
    const probe = await platform();
    const unit = (await quoteOf([{ id: A, quantity: 1 }], probe.agentId)).total;
    const p = await platform({ budget: ((unit + 1) / 100).toFixed(2) });
    for (let i = 0; i < 3; i++) {
      const big = expectCart(await p.call('POST', '/carts', lines([A, units])), 201);
      expect(big.messages).toEqual([]);
    }
    const c = expectCart(await p.call('POST', '/carts', lines([A, 1])), 201);
    const s = await p.call('POST', '/checkout-sessions', { cart_id: c.id, line_items: [] });
    expect(s.body.status).toBe('ready_for_complete');
    const done = await p.call('POST', `/checkout-sessions/${s.body.id}/complete`, completeBody);
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
  });
});

/** Hostile bodies: each a 4xx with UCP's error body, nothing stored. */
const HOSTILE: readonly { name: string; body: unknown; status: number; code: string; path?: string }[] = [
  {
    name: '10,000 lines',
    body: lines(
      ...Array.from({ length: 10_000 }, (_, i): [string, number] => [
        `SKU-ABC-${String(i).padStart(6, '0')}`,
        1,
      ]),
    ),
    status: 413,
    code: 'content_too_large',
  },
  {
    name: '51 lines',
    body: lines(...Array.from({ length: 51 }, (): [string, number] => [A, 1])),
    status: 400,
    code: 'invalid',
    path: '$.line_items',
  },
  ...[0, -1, 1.5].map((quantity) => ({
    name: `quantity ${quantity}`,
    body: lines([A, quantity]),
    status: 400,
    code: 'invalid',
    path: '$.line_items[0].quantity',
  })),
  {
    name: 'quantity 1e400',
    body: `{"line_items":[{"item":{"id":"${A}"},"quantity":1e400}]}`,
    status: 400,
    code: 'malformed_request',
  },
  {
    name: 'quantity 1000',
    body: lines([A, 1000]),
    status: 400,
    code: 'invalid',
    path: '$.line_items[0].quantity',
  },
  { name: 'no line items', body: { line_items: [] }, status: 400, code: 'invalid', path: '$.line_items' },
  { name: 'no line_items at all', body: {}, status: 400, code: 'missing', path: '$.line_items' },
];

describe('hostile cart bodies', () => {
  it.each(HOSTILE)('$name: $status $code, nothing stored', async ({ body, status, code, path }) => {
    const before = await stored();
    const p = await platform();
    expectError(await p.call('POST', '/carts', body), status, code, path);
    expect(await stored()).toBe(before);
  });
});

describe('cart arithmetic', () => {
  it('totals equal GET /cart/quote, lines add up (property)', async () => {
    const p = await platform();
    const stock = await sys.gql('query($skus: [ID!]!) { products(skus: $skus) { sku inventoryLevel } }', {
      variables: {
        skus: ['ABC', 'ELC', 'TOY', 'BOK'].flatMap((c) => [1, 2, 3].map((i) => `SKU-${c}-00000${i}`)),
      },
    });
    const skus = ((stock.data?.products ?? []) as ({ sku: string; inventoryLevel: number } | null)[]).flatMap(
      (x) => (x && x.inventoryLevel >= 60 ? [x.sku] : []),
    );
    expect(skus.length).toBeGreaterThan(3);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...skus), fc.integer({ min: 1, max: 10 })), {
          minLength: 1,
          maxLength: 6,
        }),
        async (items) => {
          const cart = expectCart(await p.call('POST', '/carts', lines(...items)), 201);
          const summed = new Map<string, number>();
          for (const [id, q] of items) summed.set(id, (summed.get(id) ?? 0) + q);
          const q = await quoteOf(
            [...summed].map(([id, quantity]) => ({ id, quantity })),
            p.agentId,
          );
          expect(totalsOf(cart)).toMatchObject({ subtotal: q.subtotal, total: q.total });
          const lineTotals = (cart.line_items as Record<string, unknown>[]).map(
            (l) => totalsOf(l).total ?? 0,
          );
          expect(lineTotals.reduce((a, b) => a + b, 0)).toBe(totalsOf(cart).total);
        },
      ),
      { numRuns: 25 },
    );
  });
});

/** One feed product with variant `id` (189.00 USD), imported as the console does. */
async function importFeed(id: string) {
  const token = await sys.token(['catalog:admin']);
  const start = await sys.gql(
    'mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }',
    {
      token,
      variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_cart', target_country: 'US' } } },
    },
  );
  const job = (start.data?.startCatalogImport as { id: string } | undefined)?.id;
  const line = JSON.stringify({
    id: 'cart-lamp',
    title: 'Cart Arc Floor Lamp',
    description: { plain: 'An arc floor lamp with a marble base.' },
    variants: [
      {
        id,
        title: 'Cart Arc Floor Lamp - Brass',
        price: { amount: 18900, currency: 'USD' },
        availability: { available: true, status: 'in_stock' },
        categories: [{ value: 'Home > Lighting', taxonomy: 'merchant' }],
      },
    ],
  });
  const append = await sys.gql(
    'mutation($id: ID!, $lines: [String!]!) { appendCatalogImport(id: $id, firstLine: 1, lines: $lines) { accepted refused } }',
    { token, variables: { id: job, lines: [line] } },
  );
  expect(append.data?.appendCatalogImport).toEqual({ accepted: 1, refused: 0 });
  await sys.gql('mutation($id: ID!) { commitCatalogImport(id: $id) { id } }', {
    token,
    variables: { id: job },
  });
  for (let i = 0; i < 200; i++) {
    const r = await sys.gql('query($id: ID!) { catalogImport(id: $id) { status } }', {
      token,
      variables: { id: job },
    });
    if ((r.data?.catalogImport as { status: string } | undefined)?.status === 'DONE') return;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error('the import did not finish');
}
