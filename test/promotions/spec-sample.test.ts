import { describe, expect, it } from 'vitest';
import { SPEC_SAMPLE_RULE } from '../../subgraphs/promotions/store/seed.ts';
import { basket, line, run } from './support.ts';

// The spec's sample rule, verbatim in its table's fields: cart contains electronics and at
// least 3 items → the cheapest electronics item is free (value 100.0).
describe('the spec sample rule (PERCENTAGE_DISCOUNT_CHEAPEST_ITEM, value 100.0)', () => {
  it.each([
    {
      case: '3 items, one of them electronics: that item is free',
      lines: [line('E1', 'electronics', 1, 49.99), line('B1', 'books', 2, 10)],
      discount: 49.99,
      freeLine: 0,
    },
    {
      case: '3 electronics items of different prices: the cheapest one is free',
      lines: [
        line('E1', 'electronics', 1, 30),
        line('E2', 'electronics', 1, 12.5),
        line('E3', 'electronics', 1, 99),
      ],
      discount: 12.5,
      freeLine: 1,
    },
    {
      case: 'one unit of a 3-unit line is free, not the whole line',
      lines: [line('E1', 'electronics', 3, 7.33)],
      discount: 7.33,
      freeLine: 0,
    },
    {
      case: 'a cheaper item of another category stays untouched',
      lines: [line('E1', 'electronics', 1, 20), line('T1', 'toys', 2, 1.99)],
      discount: 20,
      freeLine: 0,
    },
  ])('$case', ({ lines, discount, freeLine }) => {
    const result = run([SPEC_SAMPLE_RULE], basket(lines));
    expect(result.applied).toHaveLength(1);
    expect(result.applied[0]?.amount).toBe(discount);
    expect(result.applied[0]?.allocations).toEqual([
      { lineIndex: freeLine, sku: lines[freeLine]?.sku, amount: discount },
    ]);
    for (const l of result.lines)
      if (l.lineIndex !== freeLine) expect(l.discount, `line ${l.lineIndex} untouched`).toBe(0);
    expect(result.discountTotal).toBe(discount);
  });

  it.each([
    {
      case: '2 items with electronics: no discount, the quantity condition is the reason',
      lines: [line('E1', 'electronics', 1, 49.99), line('B1', 'books', 1, 10)],
      pointer: '/conditions/all/1',
      fact: 'cart.total_quantity',
      actual: 2,
    },
    {
      case: '3 items without electronics: no discount, the category condition is the reason',
      lines: [line('B1', 'books', 3, 10)],
      pointer: '/conditions/all/0',
      fact: 'cart.items',
      actual: { categories: ['books'], skus: ['B1'] },
    },
  ])('$case', ({ lines, pointer, fact, actual }) => {
    const result = run([SPEC_SAMPLE_RULE], basket(lines));
    expect(result.applied).toEqual([]);
    expect(result.discountTotal).toBe(0);
    expect(result.total).toBe(result.subtotal);
    expect(result.notApplied).toEqual([
      expect.objectContaining({
        promotionId: SPEC_SAMPLE_RULE.promotion_id,
        reason: 'CONDITION_FAILED',
        condition: expect.objectContaining({ pointer, fact, actual }),
      }),
    ]);
  });

  it('loads from its JSON text as written (100.0, integer priority, cap 1)', () => {
    const text = `{
      "version": "2.1", "promotion_id": "PROMO-ELEC-3FOR2", "name": "Cheapest electronics item free",
      "priority": 10, "status": "ACTIVE",
      "conditions": { "all": [
        { "fact": "cart.items", "operator": "contains_category", "value": "electronics" },
        { "fact": "cart.total_quantity", "operator": "greater_than_inclusive", "value": 3 } ] },
      "actions": [ { "type": "PERCENTAGE_DISCOUNT_CHEAPEST_ITEM", "value": 100.0, "target_category": "electronics" } ],
      "max_redemptions_per_user": 1 }`;
    const result = run([JSON.parse(text)], basket([line('E1', 'electronics', 3, 5)]));
    expect(result.discountTotal).toBe(5);
  });

  it('is refused once the customer used it (max_redemptions_per_user 1)', () => {
    const input = basket([line('E1', 'electronics', 3, 5)], { customer: { id: 'c-1' } });
    const used = run([SPEC_SAMPLE_RULE], input, { redeemed: new Map([[SPEC_SAMPLE_RULE.promotion_id, 1]]) });
    expect(used.applied).toEqual([]);
    expect(used.notApplied[0]?.reason).toBe('REDEMPTION_LIMIT_REACHED');
  });
});
