/**
 * The session core's pricing, pure: a quote becomes lines, totals, applied and rejected codes
 * and messages, in cents. Table-driven over promotions' reasons.
 */
import { describe, expect, it } from 'vitest';
import {
  pricedSession,
  type QuotedCart,
  rejectedCodes,
} from '../../subgraphs/procurement/checkout/pricing.ts';

const promotions = (over: Partial<QuotedCart['promotions']> = {}): QuotedCart['promotions'] => ({
  status: 'evaluated',
  applied: [],
  notApplied: [],
  coupons: [],
  ...over,
});

describe('rejected codes', () => {
  it.each([
    ['UNKNOWN', undefined, 'invalid'],
    ['EXPIRED', undefined, 'expired'],
    ['NOT_APPLIED', 'REDEMPTION_LIMIT_REACHED', 'usage_limit_reached'],
    ['NOT_APPLIED', 'EXCLUSIVE_CONFLICT', 'combination_disallowed'],
    ['NOT_APPLIED', 'STOPPED_BY_HIGHER_PRIORITY', 'combination_disallowed'],
    ['NOT_APPLIED', 'CONDITION_FAILED', 'minimum_not_met'],
    ['NOT_APPLIED', 'NO_ELIGIBLE_ITEMS', 'minimum_not_met'],
    ['NOT_APPLIED', 'NOT_YET_VALID', 'invalid'],
  ])('maps a coupon %s (%s) to %s', (status, reason, expected) => {
    const p = promotions({
      coupons: [{ code: 'SAVE5', status, promotionId: 'P1' }],
      notApplied: reason ? [{ promotionId: 'P1', reason, detail: 'the detail promotions gave' }] : [],
    });
    const [r] = rejectedCodes([' save5 '], p);
    expect(r).toMatchObject({ index: 0, code: ' save5 ', reason: expected });
    if (reason) expect(r?.message).toContain('the detail promotions gave');
  });

  it('applies nothing to an applied code, and names a code given twice as already applied', () => {
    const p = promotions({ coupons: [{ code: 'WELCOME10', status: 'APPLIED', promotionId: 'W' }] });
    expect(rejectedCodes(['WELCOME10', 'welcome10'], p)).toEqual([
      expect.objectContaining({ index: 1, reason: 'already_applied' }),
    ]);
  });
});

describe('a priced session', () => {
  const quote = (over: Partial<QuotedCart> = {}): QuotedCart => ({
    lines: [
      {
        sku: 'SKU-ABC-000001',
        name: 'A',
        quantity: 3,
        unitPrice: 19.99,
        lineTotal: 59.97,
        discount: 6,
        total: 53.97,
      },
    ],
    subtotal: 59.97,
    discountTotal: 6,
    total: 53.97,
    promotions: promotions({
      applied: [
        {
          promotionId: 'W',
          name: 'Welcome',
          couponCode: 'WELCOME10',
          amount: 6,
          allocations: [{ sku: 'SKU-ABC-000001', amount: 6 }],
        },
      ],
    }),
    quote: { id: 'q', expiresAt: '2026-11-26T12:15:00.000Z', token: 't' },
    ...over,
  });
  const items = [{ sku: 'SKU-ABC-000001', quantity: 3 }];

  it('is in exact cents, its allocations adding up to each discount', () => {
    const p = pricedSession(items, ['WELCOME10'], [0], quote(), []);
    expect(p.lines[0]).toMatchObject({
      unitCents: 1999,
      baseCents: 5997,
      discountCents: 600,
      totalCents: 5397,
    });
    expect(p.totals).toEqual({ baseCents: 5997, discountCents: 600, subtotalCents: 5397, totalCents: 5397 });
    expect(p.discounts).toEqual([
      {
        promotionId: 'W',
        name: 'Welcome',
        code: 'WELCOME10',
        amountCents: 600,
        allocations: [{ line: 0, amountCents: 600 }],
      },
    ]);
    expect(p.problems).toEqual([]);
  });

  it("keeps the quote's id and expiry, not its signed token (nothing reads it back)", () => {
    const p = pricedSession(items, [], [0], quote(), []);
    expect(p.quote).toEqual({ id: 'q', expiresAt: '2026-11-26T12:15:00.000Z' });
  });

  it.each([
    ['codes were sent', ['WELCOME10'], true],
    ['no code was sent', [], false],
  ])('says promotions are unavailable, blocking when %s', (_w, codes, blocking) => {
    const p = pricedSession(
      items,
      codes,
      [0],
      quote({ promotions: promotions({ status: 'unavailable' }) }),
      [],
    );
    expect(p.problems).toEqual([expect.objectContaining({ kind: 'promotions_unavailable', blocking })]);
  });

  it('says which lines have a fallback price (pricing unreachable), without blocking', () => {
    const q = quote();
    const p = pricedSession(
      items,
      [],
      [0],
      { ...q, lines: [{ ...(q.lines[0] as QuotedCart['lines'][0]), source: 'static' }] },
      [],
    );
    expect(p.problems).toEqual([expect.objectContaining({ kind: 'fallback_prices', blocking: false })]);
    expect(p.problems[0]?.message).toContain('SKU-ABC-000001');
  });
});
