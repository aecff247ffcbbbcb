import { describe, expect, it } from 'vitest';
import type { Stacking } from '../../subgraphs/promotions/domain/rule.ts';
import { basket, line, NOW, rule, run } from './support.ts';

const tenDollars = basket([line('A', 'x', 1, 10)]);
const pct = (id: string, priority: number, value: number, stacking?: Stacking) =>
  rule({
    promotion_id: id,
    priority,
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value }],
    ...(stacking ? { stacking } : {}),
  });

describe('priority and stacking', () => {
  it('applies higher priority first; percentages take from what is left', () => {
    const result = run([pct('LOW', 1, 10), pct('HIGH', 9, 50)], tenDollars);
    expect(result.applied.map((a) => [a.promotionId, a.amount])).toEqual([
      ['HIGH', 5],
      ['LOW', 0.5],
    ]);
    expect(result.total).toBe(4.5);
  });

  it('orders equal priorities by promotion id, so the result does not depend on load order', () => {
    const a = run([pct('B', 1, 10), pct('A', 1, 50)], tenDollars);
    const b = run([pct('A', 1, 50), pct('B', 1, 10)], tenDollars);
    expect(a).toEqual(b);
    expect(a.applied.map((x) => x.promotionId)).toEqual(['A', 'B']);
  });

  it.each([
    ['STACKABLE lets later rules apply', 'STACKABLE', ['FIRST', 'LATER'], []],
    ['STOP_AFTER stops later rules', 'STOP_AFTER', ['FIRST'], ['STOPPED_BY_HIGHER_PRIORITY']],
    ['EXCLUSIVE, applied first, stops later rules', 'EXCLUSIVE', ['FIRST'], ['STOPPED_BY_HIGHER_PRIORITY']],
  ] as const)('%s', (_label, stacking, applied, reasons) => {
    const result = run([pct('FIRST', 9, 10, stacking), pct('LATER', 1, 10)], tenDollars);
    expect(result.applied.map((a) => a.promotionId)).toEqual(applied);
    expect(result.notApplied.map((n) => n.reason)).toEqual(reasons);
  });

  it('refuses an EXCLUSIVE rule when another applied before it', () => {
    const result = run([pct('FIRST', 9, 10), pct('EXCL', 1, 50, 'EXCLUSIVE')], tenDollars);
    expect(result.applied.map((a) => a.promotionId)).toEqual(['FIRST']);
    expect(result.notApplied).toEqual([
      expect.objectContaining({ promotionId: 'EXCL', reason: 'EXCLUSIVE_CONFLICT' }),
    ]);
  });

  it('does not let a rule that gave nothing stop the others', () => {
    const empty = rule({
      promotion_id: 'EMPTY',
      priority: 9,
      stacking: 'STOP_AFTER',
      actions: [{ type: 'PERCENTAGE_DISCOUNT_CATEGORY', value: 10, target_category: 'none' }],
    });
    const result = run([empty, pct('NEXT', 1, 10)], tenDollars);
    expect(result.applied.map((a) => a.promotionId)).toEqual(['NEXT']);
  });

  it('never takes a line below zero however many 100% rules stack', () => {
    const rules = [1, 2, 3].map((p) => pct(`FREE-${p}`, p, 100));
    const result = run(rules, tenDollars);
    expect(result.total).toBe(0);
    expect(result.applied.map((a) => a.promotionId)).toEqual(['FREE-3']);
    expect(result.notApplied.map((n) => n.reason)).toEqual(['NO_ELIGIBLE_ITEMS', 'NO_ELIGIBLE_ITEMS']);
  });
});

describe('validity window, status and coupons', () => {
  const day = 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();

  it.each([
    ['not yet valid', { valid_from: iso(NOW + day) }, 'NOT_YET_VALID'],
    ['expired', { valid_until: iso(NOW - day) }, 'EXPIRED'],
    ['ends exactly now (end is exclusive)', { valid_until: iso(NOW) }, 'EXPIRED'],
  ])('skips a rule that is %s', (_label, window, reason) => {
    const result = run([rule({ promotion_id: 'W', ...window })], tenDollars);
    expect(result.notApplied[0]?.reason).toBe(reason);
  });

  it('applies a rule inside its window (start inclusive)', () => {
    const result = run(
      [rule({ promotion_id: 'W', valid_from: iso(NOW), valid_until: iso(NOW + day) })],
      tenDollars,
    );
    expect(result.applied).toHaveLength(1);
  });

  it('ignores INACTIVE rules entirely', () => {
    const result = run([{ ...pct('OFF', 1, 10), status: 'INACTIVE' }], tenDollars);
    expect(result.applied).toEqual([]);
    expect(result.notApplied).toEqual([]);
  });

  it('reports each coupon: applied, unknown, expired, or known but not applied', () => {
    const rules = [
      rule({ promotion_id: 'C-OK', coupon_codes: ['SPRING'] }),
      rule({ promotion_id: 'C-OLD', coupon_codes: ['WINTER'], valid_until: iso(NOW - day) }),
      rule({
        promotion_id: 'C-BIG',
        coupon_codes: ['BIG'],
        conditions: { all: [{ fact: 'cart.subtotal', operator: 'greater_than', value: 100 }] },
      }),
    ];
    const result = run(
      rules,
      basket([line('A', 'x', 1, 10)], { coupons: [' spring', 'nope', 'winter', 'BIG'] }),
    );
    expect(result.coupons).toEqual([
      { code: 'SPRING', status: 'APPLIED', promotionId: 'C-OK' },
      { code: 'NOPE', status: 'UNKNOWN' },
      { code: 'WINTER', status: 'EXPIRED', promotionId: 'C-OLD' },
      { code: 'BIG', status: 'NOT_APPLIED', promotionId: 'C-BIG' },
    ]);
    expect(result.applied.map((a) => [a.promotionId, a.couponCode])).toEqual([['C-OK', 'SPRING']]);
  });

  it('explains a coupon rule without its coupon as COUPON_REQUIRED', () => {
    const result = run([rule({ promotion_id: 'C', coupon_codes: ['SPRING'] })], tenDollars);
    expect(result.notApplied[0]?.reason).toBe('COUPON_REQUIRED');
  });

  it('checks the redemption cap only for a known customer', () => {
    const capped = rule({ promotion_id: 'ONCE', max_redemptions_per_user: 2 });
    const redeemed = new Map([['ONCE', 2]]);
    expect(run([capped], tenDollars, { redeemed }).applied).toHaveLength(1);
    const known = run([capped], { ...tenDollars, customer: { id: 'c' } }, { redeemed });
    expect(known.notApplied[0]?.reason).toBe('REDEMPTION_LIMIT_REACHED');
    const once = run(
      [capped],
      { ...tenDollars, customer: { id: 'c' } },
      { redeemed: new Map([['ONCE', 1]]) },
    );
    expect(once.applied).toHaveLength(1);
  });
});
