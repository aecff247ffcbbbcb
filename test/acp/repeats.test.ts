/**
 * An item on several lines (issue 50's conformance finding): the cart quote takes each SKU once,
 * so the session core quotes one line per SKU and spreads it back. Properties over random carts
 * and quotes: every part is whole cents, each sum is the quote's to the cent, and the priced
 * session's totals and allocations agree with the quote of the merged cart.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  pricedSession,
  type QuotedCart,
  stockProblems,
} from '../../subgraphs/procurement/checkout/pricing.ts';
import { mergeRepeats, splitCents, spreadQuote } from '../../subgraphs/procurement/checkout/repeats.ts';

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const cents = (x: number) => Math.round(x * 100);

describe('splitCents', () => {
  it.each([
    [100, [1, 1, 1], [34, 33, 33]],
    [5, [1, 2], [2, 3]],
    [0, [3, 4], [0, 0]],
    [-7, [1, 1], [-4, -3]],
    [999, [5], [999]],
  ])('%i over %j is %j', (total, weights, expected) => {
    expect(splitCents(total, weights)).toEqual(expected);
  });

  it('adds up to the total, each part within a cent of its proportional share (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000_000, max: 10_000_000 }),
        fc.array(fc.integer({ min: 1, max: 999 }), { minLength: 1, maxLength: 50 }),
        (total, weights) => {
          const parts = splitCents(total, weights);
          expect(sum(parts)).toBe(total);
          const w = sum(weights);
          parts.forEach((p, k) => {
            expect(Number.isInteger(p)).toBe(true);
            expect(Math.abs(p - (total * (weights[k] as number)) / w)).toBeLessThan(1);
          });
        },
      ),
    );
  });
});

/** A random cart of up to 12 lines over 4 SKUs (so SKUs repeat), and a quote of its merged lines. */
const cart = fc
  .array(fc.record({ sku: fc.integer({ min: 1, max: 4 }), quantity: fc.integer({ min: 1, max: 999 }) }), {
    minLength: 1,
    maxLength: 12,
  })
  .chain((raw) => {
    const items = raw.map((r) => ({ sku: `SKU-ABC-00000${r.sku}`, quantity: r.quantity }));
    const merged = mergeRepeats(
      items.map((_, i) => i),
      (i) => items[i]?.sku as string,
      (i) => items[i]?.quantity as number,
    );
    const n = merged.lines.length;
    return fc
      .record({
        units: fc.array(fc.integer({ min: 1, max: 99_999 }), { minLength: n, maxLength: n }),
        // Up to two promotions, each taking a share of some lines' base.
        promos: fc.array(fc.array(fc.integer({ min: 0, max: 30 }), { minLength: n, maxLength: n }), {
          maxLength: 2,
        }),
        levels: fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: n, maxLength: n }),
      })
      .map(({ units, promos, levels }) => {
        const base = merged.lines.map((l, j) => (units[j] as number) * l.quantity);
        const alloc = promos.map((pct) => base.map((b, j) => Math.floor((b * (pct[j] as number)) / 100)));
        const discount = base.map((_, j) => sum(alloc.map((a) => a[j] as number)));
        const quoted: QuotedCart = {
          lines: merged.lines.map((l, j) => ({
            sku: l.sku,
            name: l.sku,
            quantity: l.quantity,
            unitPrice: (units[j] as number) / 100,
            lineTotal: (base[j] as number) / 100,
            discount: (discount[j] as number) / 100,
            total: ((base[j] as number) - (discount[j] as number)) / 100,
          })),
          subtotal: sum(base) / 100,
          discountTotal: sum(discount) / 100,
          total: (sum(base) - sum(discount)) / 100,
          promotions: {
            status: 'evaluated',
            applied: alloc.map((a, p) => ({
              promotionId: `P${p}`,
              name: `Promotion ${p}`,
              amount: sum(a) / 100,
              allocations: merged.lines.map((l, j) => ({ sku: l.sku, amount: (a[j] as number) / 100 })),
            })),
            notApplied: [],
            coupons: [],
          },
          quote: { id: 'q', expiresAt: '2026-11-29T12:15:00.000Z', token: 't' },
          inventoryLevels: levels,
        };
        return { items, merged, quoted };
      });
  });

describe('an item on several lines', () => {
  it('merges lines of one SKU in first-seen order, their quantities summed', () => {
    const items = [
      { sku: 'A', quantity: 1 },
      { sku: 'B', quantity: 5 },
      { sku: 'A', quantity: 2 },
    ];
    const m = mergeRepeats(
      [0, 1, 2],
      (i) => items[i]?.sku as string,
      (i) => items[i]?.quantity as number,
    );
    expect(m.lines).toEqual([
      { sku: 'A', quantity: 3 },
      { sku: 'B', quantity: 5 },
    ]);
    expect(m.groups).toEqual([[0, 2], [1]]);
  });

  it("is priced as the quote of the merged cart: totals, each SKU's lines and every allocation to the cent (property)", () => {
    fc.assert(
      fc.property(cart, ({ items, merged, quoted }) => {
        const quantityOf = (i: number) => items[i]?.quantity as number;
        const spread = spreadQuote(quoted, merged, quantityOf);
        const p = pricedSession(items, [], spread.quotedItems, spread.quoted, []);
        expect(p.lines).toHaveLength(items.length);
        expect(p.totals.totalCents).toBe(cents(quoted.total));
        expect(sum(p.lines.map((l) => l.totalCents))).toBe(cents(quoted.total));
        merged.lines.forEach((ml, j) => {
          const q = quoted.lines[j] as QuotedCart['lines'][number];
          const mine = p.lines.filter((l) => l.sku === ml.sku);
          expect(mine.map((l) => l.quantity)).toEqual(merged.groups[j]?.map(quantityOf));
          expect(sum(mine.map((l) => l.baseCents))).toBe(cents(q.lineTotal));
          expect(sum(mine.map((l) => l.discountCents))).toBe(cents(q.discount));
          for (const l of mine) {
            expect(l.unitCents).toBe(cents(q.unitPrice));
            // Each line's base is its quantity at the unit price: the quote's line is unit × Q.
            expect(l.baseCents).toBe(l.unitCents * l.quantity);
          }
        });
        // Every promotion's allocations still add up to it, each on a line of its SKU, and a
        // line's discount is the sum of what the promotions allocate to it.
        p.discounts.forEach((d, k) => {
          expect(sum(d.allocations.map((a) => a.amountCents))).toBe(
            cents(quoted.promotions.applied[k]?.amount ?? 0),
          );
        });
        p.lines.forEach((l, i) => {
          const allocated = sum(
            p.discounts.flatMap((d) => d.allocations.filter((a) => a.line === i).map((a) => a.amountCents)),
          );
          expect(allocated).toBe(l.discountCents);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('checks stock against the lines of one SKU together', () => {
    const line = (item: number, quantity: number) => ({
      item,
      sku: 'SKU-ABC-000001',
      name: 'Widget',
      quantity,
    });
    expect(stockProblems([line(0, 3), line(1, 2)], [5, 5])).toEqual([]);
    const short = stockProblems([line(0, 3), line(1, 3)], [5, 5]);
    expect(short.map((p) => p.item)).toEqual([0, 1]);
    expect(short[0]?.message).toContain('5 available, 6 asked across 2 lines');
  });
});
