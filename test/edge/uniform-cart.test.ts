/**
 * Every cart reaches the quote's code in one hidden class (uniformCart): the same fields in the
 * same order whatever the caller left out, and the same cart (its hash, so its quote and token).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CartInput, cartHash, uniformCart } from '../../lib/quote-token/index.ts';

const KEYS = ['lines', 'currency', 'region', 'customerSegment', 'customerId', 'coupons'];

/** A cart as any caller may build one: optional fields absent, null or set, in any order. */
const cartArb: fc.Arbitrary<CartInput> = fc
  .record(
    {
      lines: fc.array(
        fc.record({
          sku: fc.stringMatching(/^SKU-[A-Z]{3}-\d{6}$/),
          quantity: fc.integer({ min: 1, max: 999 }),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      currency: fc.constantFrom('USD', 'EUR'),
      region: fc.constantFrom('US', 'EU'),
      customerSegment: fc.option(fc.constantFrom('VIP', 'STANDARD'), { nil: null }),
      customerId: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: null }),
      coupons: fc.option(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), { nil: null }),
    },
    { requiredKeys: ['lines', 'currency', 'region'] },
  )
  .chain((c) =>
    fc
      .shuffledSubarray(Object.keys(c), { minLength: Object.keys(c).length })
      .map(
        (order) => Object.fromEntries(order.map((k) => [k, c[k as keyof typeof c]])) as unknown as CartInput,
      ),
  );

describe('uniformCart', () => {
  it('gives every cart the same fields in the same order, its lines too', () => {
    fc.assert(
      fc.property(cartArb, (cart) => {
        const u = uniformCart(cart);
        expect(Object.keys(u)).toEqual(KEYS);
        for (const l of u.lines) expect(Object.keys(l)).toEqual(['sku', 'quantity']);
      }),
    );
  });

  it('is the same cart: the same hash, and the caller’s object is left as it was', () => {
    fc.assert(
      fc.property(cartArb, (cart) => {
        const before = JSON.stringify(cart);
        expect(cartHash(uniformCart(cart))).toBe(cartHash(cart));
        expect(JSON.stringify(cart)).toBe(before);
      }),
    );
  });

  it.each([
    [{ lines: [{ sku: 'SKU-ABC-000001', quantity: 2 }], currency: 'USD', region: 'EU' }],
    [
      {
        lines: [{ sku: 'SKU-ABC-000001', quantity: 2 }],
        currency: 'USD',
        region: 'EU',
        customerId: 'bench-1',
      },
    ],
    [{ coupons: ['SAVE'], region: 'US', currency: 'EUR', lines: [{ quantity: 1, sku: 'SKU-XYZ-000002' }] }],
  ] as CartInput[][])('keeps what a caller gave and leaves the rest undefined (%o)', (cart) => {
    const u = uniformCart(cart);
    for (const k of KEYS.slice(1))
      expect(u[k as keyof CartInput]).toEqual(cart[k as keyof CartInput] ?? undefined);
    expect(u.lines).toEqual(cart.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })));
  });
});
