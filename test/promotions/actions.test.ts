import { describe, expect, it } from 'vitest';
import type { PricedBasket } from '../../subgraphs/promotions/api.ts';
import { ACTIONS } from '../../subgraphs/promotions/domain/actions/index.ts';
import { basket, line, rule, run } from './support.ts';

// One table per action type: the discount and how it is allocated to lines.
interface Row {
  case: string;
  action: Record<string, unknown>;
  basket: PricedBasket;
  /** Expected discount per line index (cents as amounts). */
  lines: number[];
}

const mixed = basket([
  line('E1', 'electronics', 1, 100),
  line('E2', 'electronics', 2, 20.01),
  line('T1', 'toys', 3, 3.33),
]);

const rows: Row[] = [
  {
    case: 'cheapest item: 50% off one unit of the cheapest electronics line',
    action: { type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 50, target_category: 'electronics' },
    basket: mixed,
    lines: [0, 10.01, 0], // 20.01 / 2 = 10.005 → half-up 10.01
  },
  {
    case: 'cheapest item without a category: the cheapest unit of the cart',
    action: { type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 100 },
    basket: mixed,
    lines: [0, 0, 3.33],
  },
  {
    case: 'category percentage: 10% of the category total, allocated to its lines',
    action: { type: 'PERCENTAGE_DISCOUNT_CATEGORY', value: 10, target_category: 'electronics' },
    basket: mixed,
    lines: [10, 4, 0], // 10% of 140.02 = 14.00 → 999.86 + 400.14 cents, cumulative rounding gives the cent to the larger share
  },
  {
    case: 'cart percentage: 12.5% of the cart, allocated to every line',
    action: { type: 'PERCENTAGE_DISCOUNT_CART', value: 12.5 },
    basket: mixed,
    lines: [12.5, 5, 1.25], // 12.5% of 150.01 = 18.75125 → 18.75, by cumulative rounding
  },
  {
    case: 'fixed amount: 10.00 off the cart, in proportion',
    action: { type: 'FIXED_AMOUNT_DISCOUNT', value: 10, currency: 'USD' },
    basket: basket([line('A', 'x', 1, 10), line('B', 'x', 1, 10), line('C', 'x', 1, 10)]),
    lines: [3.33, 3.34, 3.33], // cumulative rounding: 333.3 → 333, 666.7 → 667, 1000
  },
  {
    case: 'fixed amount larger than the category: capped at what the lines are worth',
    action: { type: 'FIXED_AMOUNT_DISCOUNT', value: '50.00', currency: 'USD', target_category: 'toys' },
    basket: mixed,
    lines: [0, 0, 9.99],
  },
  {
    case: 'buy 2 get 1: of 5 toys, the cheapest one is free (one group of 3)',
    action: { type: 'BUY_X_GET_Y', buy_quantity: 2, get_quantity: 1, target_category: 'toys' },
    basket: basket([line('T1', 'toys', 3, 4), line('T2', 'toys', 2, 2.5), line('B', 'books', 5, 1)]),
    lines: [0, 2.5, 0],
  },
  {
    case: 'buy 1 get 1 at 50%: 4 units, the 2 cheapest half price',
    action: { type: 'BUY_X_GET_Y', buy_quantity: 1, get_quantity: 1, value: 50 },
    basket: basket([line('A', 'x', 1, 10), line('B', 'x', 2, 4), line('C', 'x', 1, 6)]),
    lines: [0, 4, 0],
  },
  {
    case: 'quantity tiers: 12 units reach the 10-unit tier (10%), not the 20-unit one',
    action: {
      type: 'QUANTITY_TIER_DISCOUNT',
      target_category: 'toys',
      tiers: [
        { min_quantity: 5, value: 5 },
        { min_quantity: 10, value: 10 },
        { min_quantity: 20, value: 20 },
      ],
    },
    basket: basket([line('T1', 'toys', 10, 1), line('T2', 'toys', 2, 2.5), line('B', 'books', 1, 100)]),
    lines: [1, 0.5, 0],
  },
];

describe('actions', () => {
  it('has at least one row for every action type', () => {
    const covered = new Set(rows.map((r) => r.action.type));
    expect(covered).toEqual(new Set(Object.keys(ACTIONS)));
  });

  it.each(rows)('$case', (r) => {
    const result = run([rule({ promotion_id: 'A', actions: [r.action] })], r.basket);
    expect(result.lines.map((l) => l.discount)).toEqual(r.lines);
    const total = Math.round(r.lines.reduce((s, d) => s + d * 100, 0)) / 100;
    expect(result.discountTotal).toBe(total);
    expect(result.applied[0]?.amount).toBe(total);
  });

  it.each([
    [
      'quantity tiers below the first tier',
      { type: 'QUANTITY_TIER_DISCOUNT', tiers: [{ min_quantity: 50, value: 5 }] },
      /first tier starts at 50/,
    ],
    ['buy 2 get 1 with 2 units', { type: 'BUY_X_GET_Y', buy_quantity: 2, get_quantity: 1 }, /needs 3/],
    [
      'category percentage of an absent category',
      { type: 'PERCENTAGE_DISCOUNT_CATEGORY', value: 10, target_category: 'food' },
      /category food/,
    ],
  ])('explains NO_ELIGIBLE_ITEMS: %s', (_label, action, detail) => {
    const result = run([rule({ promotion_id: 'N', actions: [action] })], basket([line('A', 'x', 2, 1)]));
    expect(result.applied).toEqual([]);
    expect(result.notApplied[0]?.reason).toBe('NO_ELIGIBLE_ITEMS');
    expect(result.notApplied[0]?.detail).toMatch(detail);
  });

  it('refuses a fixed amount in another currency with CURRENCY_MISMATCH', () => {
    const doc = rule({
      promotion_id: 'EUR5',
      actions: [{ type: 'FIXED_AMOUNT_DISCOUNT', value: 5, currency: 'EUR' }],
    });
    const result = run([doc], basket([line('A', 'x', 1, 10)]));
    expect(result.notApplied[0]?.reason).toBe('CURRENCY_MISMATCH');
  });

  it('applies several actions of one rule in order, each on what the previous left', () => {
    const doc = rule({
      promotion_id: 'TWO',
      actions: [
        { type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM', value: 100 },
        { type: 'PERCENTAGE_DISCOUNT_CART', value: 50 },
      ],
    });
    const result = run([doc], basket([line('A', 'x', 1, 10), line('B', 'x', 1, 4)]));
    expect(result.applied[0]?.actions).toEqual([
      'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM',
      'PERCENTAGE_DISCOUNT_CART',
    ]);
    expect(result.discountTotal).toBe(9); // B free (4), then 50% of the 10 left
    expect(result.total).toBe(5);
  });
});
