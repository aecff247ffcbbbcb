/**
 * ACP's Cart API (openapi.cart.yaml, release 2026-04-17) on the embedded system, as an agent that
 * knows only the specification uses it: discovery lists `carts`; create, get, update, cancel
 * answer Carts valid against the vendored schema, priced exactly as GET /cart/quote (property);
 * the checkout's idempotency, API-Version and error rules hold; a checkout session is created
 * from a cart's contents; hostile bodies are 4xx with ACP's Error and store nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpCartValidator } from '../../gateway/agent/acp/schema/index.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type AcpReply, acp, expectError, expectSession, issueKey, totalOf } from '../acp/support/acp.ts';
import { describeViolations } from '../acp/support/validate.ts';

let sys: TestSystem;
let key: string;
let platforms = 0;
const AGENT = `agent-acp-cart-${process.pid}`;
const A = 'SKU-ABC-000001';
const B = 'SKU-ELC-000004';

/** A key of a platform of its own (refusals count towards an identity's block). */
const fresh = async (agentId = AGENT) =>
  (
    await issueKey(sys, {
      spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/acp-cart-${++platforms}`,
      agentId,
    })
  ).key;
const carts = async () =>
  Number((await sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM carts'))[0]?.n);

/** The reply is a Cart valid against the vendored schema.cart.json. */
function expectCart(r: AcpReply, status = 200): Record<string, unknown> & { id: string } {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  const violations = acpCartValidator('response', 'Cart')(r.body);
  if (violations.length > 0) throw new Error(`not a valid ACP Cart:\n${describeViolations(violations)}`);
  return r.body as Record<string, unknown> & { id: string };
}

/** GET /cart/quote's totals for the same items, in cents, as the agent's customer. */
async function quoteOf(items: { id: string; quantity: number }[], customerId = AGENT) {
  const q = new URLSearchParams([
    ['currency', 'USD'],
    ['region', 'US'],
    ['customerId', customerId],
  ]);
  for (const it of items) q.append('line', `${it.id}:${it.quantity}`);
  const quote = (await (await fetch(`${sys.url}/cart/quote?${q}`)).json()) as {
    subtotal: number;
    discountTotal: number;
    total: number;
  };
  return {
    total: Math.round(quote.total * 100),
    base: Math.round(quote.subtotal * 100),
    discount: Math.round(quote.discountTotal * 100),
  };
}

beforeAll(async () => {
  sys = await startEmbedded({ RATE_LIMIT_CAPACITY: '100000', RATE_LIMIT_REFILL_PER_SECOND: '100000' });
  key = await fresh();
}, 240_000);
afterAll(() => sys?.close());

describe('ACP carts', () => {
  it('are announced in discovery (rfc.cart.md §6)', async () => {
    const doc = (await (await fetch(`${sys.url}/.well-known/acp.json`)).json()) as {
      capabilities: { services: string[] };
    };
    expect(doc.capabilities.services).toEqual(['checkout', 'carts']);
  });

  it('are created, read, replaced and canceled; totals are the quote’s to the cent', async () => {
    const items = [
      { id: A, quantity: 2 },
      { id: B, quantity: 1 },
    ];
    const created = expectCart(
      await acp(sys.url, key, 'POST', '/carts', { line_items: items, buyer: { email: 'buyer@example.com' } }),
      201,
    );
    expect(created.id).toMatch(/^cart_[0-9a-f]{32}$/);
    expect(created.currency).toBe('usd');
    expect(created.buyer).toEqual({ email: 'buyer@example.com' });
    const q = await quoteOf(items);
    expect(totalOf(created)).toBe(q.total);
    expect(totalOf(created, 'items_base_amount')).toBe(q.base);
    expect(expectCart(await acp(sys.url, key, 'GET', `/carts/${created.id}`))).toEqual(created);

    const replaced = expectCart(
      await acp(sys.url, key, 'PUT', `/carts/${created.id}`, { line_items: [{ id: A, quantity: 3 }] }),
    );
    expect(totalOf(replaced)).toBe((await quoteOf([{ id: A, quantity: 3 }])).total);
    expect(Date.parse(replaced.expires_at as string)).toBeGreaterThanOrEqual(
      Date.parse(created.expires_at as string),
    );
    // The cart before deletion, then 404 for every operation.
    expect(expectCart(await acp(sys.url, key, 'POST', `/carts/${created.id}/cancel`))).toEqual(replaced);
    expectError(await acp(sys.url, key, 'GET', `/carts/${created.id}`), 404, 'not_found');
    expectError(
      await acp(sys.url, key, 'PUT', `/carts/${created.id}`, { line_items: [{ id: A, quantity: 1 }] }),
      404,
      'not_found',
    );
    expectError(await acp(sys.url, key, 'POST', `/carts/${created.id}/cancel`, {}), 404, 'not_found');
  });

  it('keep unknown items beside known ones as messages; a cart of nothing buyable is 422 and not stored', async () => {
    const mixed = expectCart(
      await acp(sys.url, key, 'POST', '/carts', {
        line_items: [
          { id: A, quantity: 1 },
          { id: 'no-such-item', quantity: 1 },
        ],
      }),
      201,
    );
    expect(mixed.messages).toEqual([
      expect.objectContaining({ type: 'error', code: 'not_found', param: '$.line_items[1]' }),
    ]);
    const before = await carts();
    const k = await fresh();
    expectError(
      await acp(sys.url, k, 'POST', '/carts', { line_items: [{ id: 'no-such-item', quantity: 1 }] }),
      422,
      'out_of_stock',
    );
    // A replacement with nothing buyable is refused too, and the cart stays as it was.
    expectError(
      await acp(sys.url, key, 'PUT', `/carts/${mixed.id}`, {
        line_items: [{ id: 'SKU-ZZZ-999999', quantity: 1 }],
      }),
      422,
      'out_of_stock',
    );
    expect(expectCart(await acp(sys.url, key, 'GET', `/carts/${mixed.id}`))).toEqual(mixed);
    expect(await carts()).toBe(before);
  });

  it('follow the checkout’s idempotency and API-Version rules', async () => {
    const body = { line_items: [{ id: A, quantity: 1 }] };
    const headers = { 'idempotency-key': `acp-cart-idem-${process.pid}` };
    const first = expectCart(await acp(sys.url, key, 'POST', '/carts', body, headers), 201);
    const again = await acp(sys.url, key, 'POST', '/carts', body, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(expectCart(again, 201).id).toBe(first.id);
    expectError(
      await acp(sys.url, key, 'POST', '/carts', { line_items: [{ id: A, quantity: 2 }] }, headers),
      422,
    );
    expectError(await acp(sys.url, key, 'POST', '/carts', body, { 'idempotency-key': null }), 400);
    expectError(
      await acp(sys.url, key, 'PUT', `/carts/${first.id}`, body, { 'idempotency-key': null }),
      400,
      'idempotency_key_required',
    );
    expectError(
      await acp(sys.url, key, 'GET', `/carts/${first.id}`, undefined, { 'api-version': null }),
      400,
    );
    expectError(await acp(sys.url, undefined, 'GET', `/carts/${first.id}`), 401);
  });

  it("are another platform's 404, for every operation, and left as they were", async () => {
    const mine = expectCart(
      await acp(sys.url, key, 'POST', '/carts', { line_items: [{ id: A, quantity: 1 }] }),
      201,
    );
    const other = await fresh();
    expectError(await acp(sys.url, other, 'GET', `/carts/${mine.id}`), 404, 'not_found');
    expectError(
      await acp(sys.url, other, 'PUT', `/carts/${mine.id}`, { line_items: [{ id: A, quantity: 9 }] }),
      404,
      'not_found',
    );
    expectError(await acp(sys.url, other, 'POST', `/carts/${mine.id}/cancel`), 404, 'not_found');
    expect(expectCart(await acp(sys.url, key, 'GET', `/carts/${mine.id}`))).toEqual(mine);
  });

  it('become a checkout session: the agent reads the cart and creates the session with its items (the RFC defers cart_id)', async () => {
    const cart = expectCart(
      await acp(sys.url, key, 'POST', '/carts', {
        line_items: [
          { id: A, quantity: 2 },
          { id: B, quantity: 3 },
        ],
      }),
      201,
    );
    const read = expectCart(await acp(sys.url, key, 'GET', `/carts/${cart.id}`));
    const lines = (read.line_items as { item: { id: string }; quantity: number }[]).map((l) => ({
      id: l.item.id,
      quantity: l.quantity,
    }));
    const session = expectSession(
      await acp(sys.url, key, 'POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: lines,
      }),
      201,
    );
    expect(totalOf(session)).toBe(totalOf(read));
    // The cart's own request shape is refused by checkout create where the release says so.
    expectError(
      await acp(sys.url, await fresh(), 'POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: lines,
        cart_id: cart.id,
      }),
      400,
    );
  });
});

/** Hostile bodies: each a 4xx with ACP's Error, nothing stored. */
const HOSTILE: readonly { name: string; body: unknown; status: number; code: string; param?: string }[] = [
  {
    name: '10,000 lines',
    body: {
      line_items: Array.from({ length: 10_000 }, (_, i) => ({
        id: `SKU-ABC-${String(i).padStart(6, '0')}`,
        quantity: 1,
      })),
    },
    status: 413,
    code: 'content_too_large',
  },
  {
    name: '51 lines',
    body: { line_items: Array.from({ length: 51 }, () => ({ id: A, quantity: 1 })) },
    status: 400,
    code: 'too_many_items',
    param: '$.line_items',
  },
  ...[0, -1, 1.5].map((quantity) => ({
    name: `quantity ${quantity}`,
    body: { line_items: [{ id: A, quantity }] },
    status: 400,
    code: 'invalid',
    param: '$.line_items[0].quantity',
  })),
  // JSON.parse reads 1e400 as Infinity: the strict parser refuses a number no double holds.
  {
    name: 'quantity 1e400',
    body: `{"line_items":[{"id":"${A}","quantity":1e400}]}`,
    status: 400,
    code: 'malformed_request',
  },
  {
    name: 'quantity 1000',
    body: { line_items: [{ id: A, quantity: 1000 }] },
    status: 400,
    code: 'quantity_exceeded',
    param: '$.line_items[0].quantity',
  },
  { name: 'no line items', body: { line_items: [] }, status: 400, code: 'invalid', param: '$.line_items' },
  {
    name: 'unknown ids only',
    body: { line_items: [{ id: 'ghost', quantity: 1 }] },
    status: 422,
    code: 'out_of_stock',
    param: '$.line_items[0]',
  },
  {
    name: 'a field the cart schema does not have',
    body: { line_items: [{ id: A, quantity: 1 }], currency: 'usd' },
    status: 400,
    code: 'invalid',
    param: '$.currency',
  },
  { name: 'an array body', body: '[1,2]', status: 400, code: 'invalid', param: '$' },
];

describe('hostile cart bodies', () => {
  it.each(HOSTILE)(
    '$name: $status $code with ACP’s Error, nothing stored',
    async ({ body, status, code, param }) => {
      const before = await carts();
      const r = await acp(sys.url, await fresh(), 'POST', '/carts', body);
      const e = expectError(r, status, code);
      expect(e.param).toBe(param);
      expect(await carts()).toBe(before);
    },
  );

  it('a replacement with a hostile body leaves the cart as it was', async () => {
    const k = await fresh();
    const cart = expectCart(
      await acp(sys.url, k, 'POST', '/carts', { line_items: [{ id: A, quantity: 1 }] }),
      201,
    );
    // Four, not all: more than five refusals in a row would block the platform (429).
    for (const { body, status, code } of HOSTILE.filter((h) => h.status === 400).slice(0, 4))
      expectError(await acp(sys.url, k, 'PUT', `/carts/${cart.id}`, body), status, code);
    expect(expectCart(await acp(sys.url, k, 'GET', `/carts/${cart.id}`))).toEqual(cart);
  });
});

describe('cart arithmetic', () => {
  it('totals equal GET /cart/quote for the same items, lines add up (property)', async () => {
    // Items with stock for any cart drawn here (a cart of nothing in stock is 422, not priced).
    const stock = await sys.gql('query($skus: [ID!]!) { products(skus: $skus) { sku inventoryLevel } }', {
      variables: {
        skus: ['ABC', 'ELC', 'TOY', 'BOK', 'HOM'].flatMap((c) =>
          [1, 2, 3, 4].map((i) => `SKU-${c}-00000${i}`),
        ),
      },
    });
    const skus = ((stock.data?.products ?? []) as ({ sku: string; inventoryLevel: number } | null)[]).flatMap(
      (p) => (p && p.inventoryLevel >= 60 ? [p.sku] : []),
    );
    expect(skus.length).toBeGreaterThan(3);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ id: fc.constantFrom(...skus), quantity: fc.integer({ min: 1, max: 10 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        async (items) => {
          const cart = expectCart(await acp(sys.url, key, 'POST', '/carts', { line_items: items }), 201);
          // An item on several lines is quoted once with their quantities' sum.
          const summed = new Map<string, number>();
          for (const it of items) summed.set(it.id, (summed.get(it.id) ?? 0) + it.quantity);
          const q = await quoteOf([...summed].map(([id, quantity]) => ({ id, quantity })));
          expect(totalOf(cart)).toBe(q.total);
          expect(totalOf(cart, 'items_base_amount')).toBe(q.base);
          expect(totalOf(cart, 'items_discount')).toBe(q.discount);
          const lineTotals = (cart.line_items as { totals: { type: string; amount: number }[] }[]).map(
            (l) => l.totals.find((t) => t.type === 'total')?.amount ?? 0,
          );
          expect(lineTotals.reduce((a, b) => a + b, 0)).toBe(totalOf(cart));
        },
      ),
      { numRuns: 25 },
    );
  });
});
