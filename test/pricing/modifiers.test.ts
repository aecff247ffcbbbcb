import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { money } from '../../lib/money.ts';
import { applyModifiers } from '../../subgraphs/pricing/domain/modifiers.ts';

describe('applyModifiers (spec behaviours 3 to 5)', () => {
  it.each([
    // inventoryLevel, segment, base, dynamicPrice, modifiers
    [9, 'STANDARD', '19.99', '22.99', ['SCARCITY_SURCHARGE_15']],
    [9.99, 'STANDARD', '100.00', '115.00', ['SCARCITY_SURCHARGE_15']],
    [0, 'STANDARD', '100.00', '115.00', ['SCARCITY_SURCHARGE_15']],
    [-3, 'STANDARD', '100.00', '115.00', ['SCARCITY_SURCHARGE_15']],
    [10, 'STANDARD', '19.99', '19.99', []],
    [250, 'STANDARD', '19.99', '19.99', []],
    [500, 'STANDARD', '19.99', '19.99', []],
    [500.5, 'STANDARD', '100.00', '90.00', ['OVERSTOCK_DISCOUNT_10']],
    [501, 'STANDARD', '19.99', '17.99', ['OVERSTOCK_DISCOUNT_10']],
    [9, 'VIP', '19.99', '21.84', ['SCARCITY_SURCHARGE_15', 'VIP_SEGMENT_DISCOUNT']],
    [10, 'VIP', '19.99', '18.99', ['VIP_SEGMENT_DISCOUNT']],
    [500, 'VIP', '19.99', '18.99', ['VIP_SEGMENT_DISCOUNT']],
    [501, 'VIP', '19.99', '17.09', ['OVERSTOCK_DISCOUNT_10', 'VIP_SEGMENT_DISCOUNT']],
    [50, 'vip', '19.99', '19.99', []],
    [50, 'VIP ', '19.99', '19.99', []],
    [50, '', '5.00', '5.00', []],
  ] as const)(
    'inventory %s, segment %j: %s becomes %s with %j',
    (inventory, segment, base, expected, modifiers) => {
      const r = applyModifiers(money(base), inventory, segment);
      expect(r.dynamicPrice.toFixed(2)).toBe(expected);
      expect(r.appliedModifiers).toEqual(modifiers);
    },
  );

  it('computes in exact decimals: 19.99 × 1.15 is 22.99, and 1.10 × 1.15 is 1.27, not 1.26', () => {
    expect(applyModifiers(money('19.99'), 1, 'X').dynamicPrice.toFixed(2)).toBe('22.99');
    // In binary floating point 1.1 × 1.15 is 1.2649999…, which rounds down a cent.
    expect((1.1 * 1.15).toFixed(2)).toBe('1.26');
    expect(applyModifiers(money('1.10'), 1, 'X').dynamicPrice.toFixed(2)).toBe('1.27');
  });

  const cents = fc.integer({ min: 1, max: 10_000_000_00 }).map((c) => money(c).dividedBy(100));
  const inventory = fc.oneof(
    fc.integer({ min: -10, max: 5000 }),
    fc.double({ min: -10, max: 5000, noNaN: true }),
  );
  const segment = fc.oneof(fc.constant('VIP'), fc.string({ maxLength: 8 }));

  it('rounds once, half-up, to 2 decimals of the exact product', () => {
    fc.assert(
      fc.property(cents, inventory, segment, (base, inv, seg) => {
        const r = applyModifiers(base, inv, seg);
        let exact = base;
        if (inv < 10) exact = exact.times('1.15');
        else if (inv > 500) exact = exact.times('0.9');
        if (seg === 'VIP') exact = exact.times('0.95');
        expect(r.dynamicPrice.decimalPlaces()).toBeLessThanOrEqual(2);
        expect(r.dynamicPrice.minus(exact).abs().lte('0.005')).toBe(true);
        expect(r.dynamicPrice.eq(exact.toDecimalPlaces(2, 4 /* ROUND_HALF_UP */))).toBe(true);
      }),
    );
  });

  it('lists modifiers in the order applied: inventory first, VIP last, never both inventory ones', () => {
    fc.assert(
      fc.property(cents, inventory, segment, (base, inv, seg) => {
        const codes = applyModifiers(base, inv, seg).appliedModifiers;
        const expected = [
          ...(inv < 10 ? ['SCARCITY_SURCHARGE_15'] : inv > 500 ? ['OVERSTOCK_DISCOUNT_10'] : []),
          ...(seg === 'VIP' ? ['VIP_SEGMENT_DISCOUNT'] : []),
        ];
        expect(codes).toEqual(expected);
      }),
    );
  });

  it('never prices a VIP higher than anyone else with the same stock, and keeps prices positive', () => {
    fc.assert(
      fc.property(cents, inventory, (base, inv) => {
        const vip = applyModifiers(base, inv, 'VIP').dynamicPrice;
        const other = applyModifiers(base, inv, 'STANDARD').dynamicPrice;
        expect(vip.lte(other)).toBe(true);
        expect(vip.gte(0)).toBe(true);
      }),
    );
  });
});
