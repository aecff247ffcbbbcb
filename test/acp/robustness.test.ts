/**
 * Random input on the ACP routes (embedded system): no random body gets a 5xx, and random carts
 * cost exactly what GET /cart/quote says; another platform gets 404 for every operation. The
 * table of hostile bodies runs on both topologies (cases.ts, checkout.suite.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { API_VERSION, acp, expectError, expectSession, issueKey, totalOf } from './support/acp.ts';

let sys: TestSystem;
let key: string;
let skus: string[] = [];
let platforms = 0;
const FUZZ_AGENT = 'agent-acp-fuzz-001';

/**
 * A key of a platform of its own: each refusal counts towards its identity's block (more than 5
 * in a row block it), so cases that send bad bodies each get a fresh identity.
 */
const fresh = async () =>
  (
    await issueKey(sys, {
      spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/acp-fuzz-${++platforms}`,
      // The customer the totals property quotes as (promotions count caps per customer).
      agentId: FUZZ_AGENT,
    })
  ).key;

const stored = async () =>
  Number((await sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM checkout_sessions'))[0]?.n);

beforeAll(async () => {
  // A bucket that never runs dry here: these tests are about bodies, not about the rate limit.
  sys = await startEmbedded({ RATE_LIMIT_CAPACITY: '100000', RATE_LIMIT_REFILL_PER_SECOND: '100000' });
  key = await fresh();
  const candidates = ['ABC', 'ELC', 'TOY', 'TOL', 'BOK', 'APP', 'GRC', 'HOM'].flatMap((c) =>
    Array.from({ length: 12 }, (_, i) => `SKU-${c}-${String(i + 1).padStart(6, '0')}`),
  );
  const r = await sys.gql('query($skus: [ID!]!) { products(skus: $skus) { sku } }', {
    variables: { skus: candidates },
  });
  skus = ((r.data?.products ?? []) as ({ sku: string } | null)[]).flatMap((p) => (p ? [p.sku] : []));
});
afterAll(() => sys?.close());

const valid = { currency: 'usd', capabilities: {}, line_items: [{ id: 'SKU-ABC-000001', quantity: 1 }] };
const raw = (body: string, headers: Record<string, string> = {}, as = key) =>
  fetch(`${sys.url}/acp/checkout_sessions`, {
    method: 'POST',
    headers: {
      'api-version': API_VERSION,
      authorization: `Bearer ${as}`,
      'idempotency-key': `fuzz-${Math.random()}`,
      'content-type': 'application/json',
      ...headers,
    },
    body,
  });

describe('another platform, random bodies', () => {
  it('answers 404 to another platform for every operation on a session, and leaves it as it was', async () => {
    const mine = expectSession(await acp(sys.url, key, 'POST', '/checkout_sessions', valid), 201);
    const other = await issueKey(sys, {
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/acp-other',
    });
    expectError(await acp(sys.url, other.key, 'GET', `/checkout_sessions/${mine.id}`), 404, 'not_found');
    expectError(
      await acp(sys.url, other.key, 'POST', `/checkout_sessions/${mine.id}/cancel`, {}),
      404,
      'not_found',
    );
    expectError(
      await acp(sys.url, other.key, 'POST', `/checkout_sessions/${mine.id}`, {
        line_items: [{ id: 'SKU-ABC-000001', quantity: 5 }],
      }),
      404,
      'not_found',
    );
    expectError(
      await acp(sys.url, other.key, 'POST', `/checkout_sessions/${mine.id}/complete`, {
        payment_data: { purchase_order_number: 'PO-X' },
      }),
      404,
      'not_found',
    );
    const after = expectSession(await acp(sys.url, key, 'GET', `/checkout_sessions/${mine.id}`));
    expect(after.status).toBe('ready_for_payment');
    expect(after.line_items).toEqual(mine.line_items);
  });

  it('never answers 5xx to random bodies (property)', async () => {
    const before = await stored();
    let created = 0;
    let runs = 0;
    let as = key;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.json(),
          fc
            .record({
              currency: fc.constantFrom('usd', 'USD', 'eur', ''),
              capabilities: fc.constant({}),
              line_items: fc.array(
                fc.record(
                  {
                    id: fc.oneof(fc.constantFrom('SKU-ABC-000001', 'SKU-ELC-000004'), fc.string()),
                    quantity: fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.double()),
                  },
                  { requiredKeys: ['id'] },
                ),
                { maxLength: 5 },
              ),
            })
            .map((b) => JSON.stringify(b)),
        ),
        async (body) => {
          // A fresh identity every 4 bodies: never 5 refusals in a row on one (the block).
          if (runs++ % 4 === 0) as = await fresh();
          const res = await raw(body, {}, as);
          expect(res.status).toBeLessThan(500);
          const json = (await res.json()) as Record<string, unknown>;
          if (res.status === 201) created++;
          else expectError({ status: res.status, headers: res.headers, body: json }, res.status);
        },
      ),
      {
        numRuns: 150,
        // fc.json() makes a __proto__ or constructor key now and then: the strict parser's 400
        // malformed_request, an ACP Error like any other refusal. Always tried, inside an
        // otherwise well-formed create body.
        examples: [
          [
            '{"currency":"usd","capabilities":{},"line_items":[{"id":"SKU-ABC-000001","quantity":1,"constructor":0}]}',
          ],
          [
            '{"currency":"usd","capabilities":{"__proto__":{}},"line_items":[{"id":"SKU-ABC-000001","quantity":1}]}',
          ],
        ],
      },
    );
    expect(await stored()).toBe(before + created);
  });
});

describe('totals', () => {
  it('equal GET /cart/quote for the same cart, to the cent (property)', async () => {
    expect(skus.length).toBeGreaterThan(10);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom(...skus), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 6, maxLength: 6 }),
        fc.subarray(['WELCOME10', 'SAVE5']),
        async (lines, quantities, codes) => {
          const items = lines.map((id, i) => ({ id, quantity: quantities[i] as number }));
          const session = expectSession(
            await acp(sys.url, key, 'POST', '/checkout_sessions', {
              currency: 'usd',
              capabilities: { extensions: ['discount'] },
              line_items: items,
              discounts: { codes },
            }),
            201,
          );
          const q = new URLSearchParams([
            ['currency', 'USD'],
            ['region', 'US'],
            // The session's customer: the agent id of its key.
            ['customerId', FUZZ_AGENT],
          ]);
          for (const it of items) q.append('line', `${it.id}:${it.quantity}`);
          for (const c of codes) q.append('coupon', c);
          const quote = (await (await fetch(`${sys.url}/cart/quote?${q}`)).json()) as {
            subtotal: number;
            discountTotal: number;
            total: number;
          };
          expect(totalOf(session)).toBe(Math.round(quote.total * 100));
          expect(totalOf(session, 'items_base_amount')).toBe(Math.round(quote.subtotal * 100));
          expect(totalOf(session, 'items_discount')).toBe(Math.round(quote.discountTotal * 100));
          // Line totals add up to the session's, and allocations to each discount's amount.
          const lineTotals = (session.line_items as { totals: { type: string; amount: number }[] }[]).map(
            (l) => l.totals.find((t) => t.type === 'total')?.amount ?? 0,
          );
          expect(lineTotals.reduce((a, b) => a + b, 0)).toBe(totalOf(session));
          const applied = (
            session.discounts as { applied: { amount: number; allocations: { amount: number }[] }[] }
          ).applied;
          for (const a of applied) expect(a.allocations.reduce((s, x) => s + x.amount, 0)).toBe(a.amount);
        },
      ),
      { numRuns: 40 },
    );
  });
});
