import { describe, expect, it } from 'vitest';
import { OPERATORS } from '../../subgraphs/promotions/domain/operators.ts';
import { basket, line, rule, run } from './support.ts';

// One row per operator (and per fact kind it takes): a basket where the condition holds and
// one where it fails. The rule's action is 10% off the cart, so "holds" means a discount.
const cart = (extra: Parameters<typeof basket>[1] = {}, qty = 2, price = 10) =>
  basket([line('SKU-1', 'books', qty, price), line('SKU-2', 'toys', 1, 5)], extra);

const rows = [
  {
    operator: 'contains_category',
    fact: 'cart.items',
    value: 'toys',
    holds: cart(),
    fails: basket([line('S', 'books', 1, 1)]),
  },
  {
    operator: 'contains_sku',
    fact: 'cart.items',
    value: 'SKU-2',
    holds: cart(),
    fails: basket([line('S', 'toys', 1, 1)]),
  },
  { operator: 'equal', fact: 'cart.currency', value: 'USD', holds: cart(), fails: cart({ currency: 'EUR' }) },
  { operator: 'equal', fact: 'cart.total_quantity', value: 3, holds: cart(), fails: cart({}, 3) },
  { operator: 'equal', fact: 'cart.subtotal', value: '25.00', holds: cart(), fails: cart({}, 2, 10.01) },
  {
    operator: 'not_equal',
    fact: 'customer.segment',
    value: 'VIP',
    holds: cart(),
    fails: cart({ customer: { segment: 'VIP' } }),
  },
  { operator: 'not_equal', fact: 'cart.total_quantity', value: 4, holds: cart(), fails: cart({}, 3) },
  {
    operator: 'in',
    fact: 'customer.segment',
    value: ['VIP', 'GOLD'],
    holds: cart({ customer: { segment: 'GOLD' } }),
    fails: cart(),
  },
  { operator: 'in', fact: 'cart.total_quantity', value: [3, 5], holds: cart(), fails: cart({}, 3) },
  {
    operator: 'not_in',
    fact: 'customer.id',
    value: ['banned-1'],
    holds: cart({ customer: { id: 'c-2' } }),
    fails: cart({ customer: { id: 'banned-1' } }),
  },
  { operator: 'less_than', fact: 'cart.subtotal', value: 25.01, holds: cart(), fails: cart({}, 2, 10.01) },
  {
    operator: 'less_than_inclusive',
    fact: 'cart.total_quantity',
    value: 3,
    holds: cart(),
    fails: cart({}, 3),
  },
  { operator: 'greater_than', fact: 'cart.subtotal', value: 25, holds: cart({}, 2, 10.01), fails: cart() },
  {
    operator: 'greater_than_inclusive',
    fact: 'cart.total_quantity',
    value: 3,
    holds: cart(),
    fails: cart({}, 1),
  },
  {
    operator: 'contains',
    fact: 'coupon.codes',
    value: 'Spring',
    holds: cart({ coupons: ['spring'] }),
    fails: cart({ coupons: ['SUMMER'] }),
  },
];

describe('operators', () => {
  it('has a row for every operator the engine knows', () => {
    expect(new Set(rows.map((r) => r.operator))).toEqual(new Set(Object.keys(OPERATORS)));
  });

  it.each(rows)('$fact $operator $value: holds on one basket, fails with an explanation on another', (r) => {
    const doc = rule({
      promotion_id: 'OP',
      conditions: { all: [{ fact: r.fact, operator: r.operator, value: r.value }] },
    });
    expect(run([doc], r.holds).applied.map((a) => a.promotionId)).toEqual(['OP']);
    const failed = run([doc], r.fails);
    expect(failed.applied).toEqual([]);
    expect(failed.notApplied[0]).toMatchObject({
      reason: 'CONDITION_FAILED',
      condition: { pointer: '/conditions/all/0', fact: r.fact, operator: r.operator, expected: r.value },
    });
  });

  it('compares money exactly: 0.1 + 0.2 of subtotal equals 0.30', () => {
    const doc = rule({
      promotion_id: 'EXACT',
      conditions: { all: [{ fact: 'cart.subtotal', operator: 'equal', value: 0.3 }] },
    });
    const result = run([doc], basket([line('A', 'x', 1, 0.1), line('B', 'x', 1, 0.2)]));
    expect(result.applied).toHaveLength(1);
  });

  it.each([
    [
      'any: one of two holds',
      {
        any: [
          { fact: 'cart.currency', operator: 'equal', value: 'EUR' },
          { fact: 'cart.items', operator: 'contains_category', value: 'toys' },
        ],
      },
      true,
    ],
    [
      'any: none holds',
      {
        any: [
          { fact: 'cart.currency', operator: 'equal', value: 'EUR' },
          { fact: 'cart.items', operator: 'contains_category', value: 'food' },
        ],
      },
      false,
    ],
    ['not: negates', { not: { fact: 'cart.items', operator: 'contains_category', value: 'food' } }, true],
    [
      'not: negates a holding condition',
      { not: { fact: 'cart.items', operator: 'contains_category', value: 'toys' } },
      false,
    ],
    [
      'all > any > not nested',
      {
        all: [
          { any: [{ not: { fact: 'cart.currency', operator: 'equal', value: 'EUR' } }] },
          { fact: 'cart.total_quantity', operator: 'greater_than', value: 2 },
        ],
      },
      true,
    ],
    ['empty all always holds', { all: [] }, true],
  ])('%s', (_label, conditions, applies) => {
    const result = run([rule({ promotion_id: 'NEST', conditions })], cart());
    expect(result.applied.length).toBe(applies ? 1 : 0);
    if (!applies) expect(result.notApplied[0]?.reason).toBe('CONDITION_FAILED');
  });
});
