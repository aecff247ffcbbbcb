/**
 * Hostile cart bodies, each a 4xx with UCP's error body and nothing stored, and the cart's
 * arithmetic against GET /cart/quote (property): a part of ../ucp.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../../harness/ucp-platform.ts';
import { A, type CartContext, expectCart, expectError, lines } from './support.ts';

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
    // A string no stored text holds (I-JSON, RFC 7493): refused by the strict parser.
    name: 'a lone surrogate in a string',
    body: `{"line_items":[{"item":{"id":"${A}\\ud800"},"quantity":1}]}`,
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

export function hostileTests(t: CartContext): void {
  describe('hostile cart bodies', () => {
    it.each(HOSTILE)('$name: $status $code, nothing stored', async ({ body, status, code, path }) => {
      const before = await t.stored();
      const p = await t.platform();
      expectError(await p.call('POST', '/carts', body), status, code, path);
      expect(await t.stored()).toBe(before);
    });
  });

  describe('cart arithmetic', () => {
    it('totals equal GET /cart/quote, lines add up (property)', async () => {
      const p = await t.platform();
      const stock = await t.sys.gql('query($skus: [ID!]!) { products(skus: $skus) { sku inventoryLevel } }', {
        variables: {
          skus: ['ABC', 'ELC', 'TOY', 'BOK'].flatMap((c) => [1, 2, 3].map((i) => `SKU-${c}-00000${i}`)),
        },
      });
      const skus = (
        (stock.data?.products ?? []) as ({ sku: string; inventoryLevel: number } | null)[]
      ).flatMap((x) => (x && x.inventoryLevel >= 60 ? [x.sku] : []));
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
            const q = await t.quoteOf(
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
}
