/**
 * The console's pure helpers for checkout (ACP): amounts in cents, a checkout order's lines, the
 * approval card's budget against the catalog, the key form and the Checkout page's filter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsOf, formatAmount, formatCents } from '../../console/src/amounts.ts';
import { catalogShortfall, type Pending, shortfallSentence } from '../../console/src/approvals.ts';
import {
  type CheckoutApiKey,
  EMPTY_ISSUE,
  fieldError,
  issueInput,
  keysInOrder,
} from '../../console/src/checkout-keys.ts';
import { SESSIONS_PAGE, sessionVariables } from '../../console/src/checkout-sessions.ts';
import { lineCount, lineSentence, pricedLines } from '../../console/src/order-lines.ts';

describe('amounts in cents (never through a double)', () => {
  it.each([
    ['12.50', 1250n],
    ['12.5', 1250n],
    ['440', 44000n],
    ['0', 0n],
    ['0.05', 5n],
    [' 250.75 ', 25075n],
    ['999999999999.99', 99999999999999n],
  ])('reads %j as %s cents', (text, cents) => {
    expect(centsOf(text)).toBe(cents);
  });

  it.each(['', '-1', '1.234', '1e3', '1,000.00', '.5', 'abc', '12.'])('reads %j as no amount', (text) => {
    expect(centsOf(text)).toBeUndefined();
  });

  it.each([
    [132000n, '1,320.00'],
    [0n, '0.00'],
    [5n, '0.05'],
    [25075n, '250.75'],
    [123456789n, '1,234,567.89'],
    [-132000n, '-1,320.00'],
  ])('prints %s cents as %j', (cents, text) => {
    expect(formatCents(cents)).toBe(text);
  });

  it('prints any amount back to the same cents (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 16n }), (c) => {
        expect(centsOf(formatCents(c).replace(/,/g, ''))).toBe(c);
      }),
    );
  });

  it('shows text that is not a cent amount as it came', () => {
    expect(formatAmount('1.234')).toBe('1.234');
    expect(formatAmount('1320')).toBe('1,320.00');
  });
});

describe("a checkout order's lines (Orders, Approvals)", () => {
  const line = (sku: string, quantity: number, unit: string, discount: string, total: string) => ({
    sku,
    quantity,
    unitPriceDecimal: unit,
    discountDecimal: discount,
    lineTotalDecimal: total,
  });
  const v2 = {
    sku: 'SKU-ABC-000001',
    quantity: 3,
    unitPriceDecimal: null,
    discountDecimal: null,
    lineTotalDecimal: null,
  };

  it('has priced lines when it has a total; a /v2 order (one line, no amounts) has none', () => {
    const lines = [line('SKU-ABC-000001', 2, '12.50', '1.00', '24.00')];
    expect(pricedLines({ lines, totalDecimal: '24.00' })).toEqual(lines);
    expect(pricedLines({ lines: [v2], totalDecimal: null })).toBeNull();
    expect(pricedLines({ lines: [v2], totalDecimal: '1.00' })).toBeNull();
    expect(pricedLines({})).toBeNull();
  });

  it.each([
    [
      line('SKU-ABC-000001', 2, '12.50', '1.00', '24.00'),
      '2 × SKU-ABC-000001 at 12.50 USD, discount 1.00 USD, total 24.00 USD',
    ],
    [
      line('SKU-ELC-000004', 1, '1440', '0.00', '1440.00'),
      '1 × SKU-ELC-000004 at 1,440.00 USD, total 1,440.00 USD',
    ],
  ])('says %j as %j', (l, sentence) => {
    expect(lineSentence(l)).toBe(sentence);
  });

  it('counts lines in words', () => {
    expect([lineCount(1), lineCount(3)]).toEqual(['1 line', '3 lines']);
  });
});

describe("the approval card's budget against the catalog", () => {
  const pending = (quantity: number, amount: string, prices: { currency: string; amountDecimal: string }[]) =>
    ({
      order: {
        orderId: 'ord_1',
        sku: 'SKU-ELC-000004',
        quantity,
        processedAt: 0,
        product: { name: 'Monitor', basePrices: prices },
      },
      agentId: 'agent-0000001',
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent',
      amount,
      approvalsRequired: 1,
      approvals: [],
      expiresAt: 0,
      policy: null,
      remainingBudget: null,
    }) satisfies Pending;

  it('says plainly when quantity × catalog price is above the budget', () => {
    const s = catalogShortfall(pending(3, '250.75', [{ currency: 'USD', amountDecimal: '440' }]));
    expect(s).toEqual({ neededCents: 132000n, allocatedCents: 25075n });
    expect(shortfallSentence(s as NonNullable<typeof s>)).toBe(
      'The budget does not cover the catalog cost: 1,320.00 USD needed, 250.75 USD allocated.',
    );
  });

  it.each([
    ['a budget that covers it', pending(3, '1320.00', [{ currency: 'USD', amountDecimal: '440' }])],
    ['no USD price', pending(3, '1.00', [{ currency: 'EUR', amountDecimal: '440' }])],
    [
      'no catalog product',
      { ...pending(3, '1.00', []), order: { ...pending(3, '1.00', []).order, product: null } },
    ],
    ['a price with more than cents', pending(3, '1.00', [{ currency: 'USD', amountDecimal: '0.001' }])],
  ])('says nothing for %s', (_name, p) => {
    expect(catalogShortfall(p)).toBeUndefined();
  });

  it('finds a shortfall exactly when the cents say so, whatever the amounts (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 99_999_999 }),
        fc.integer({ min: 0, max: 99_999_999 }),
        (quantity, unitCents, budgetCents) => {
          const text = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
          const s = catalogShortfall(
            pending(quantity, text(budgetCents), [{ currency: 'USD', amountDecimal: text(unitCents) }]),
          );
          const needed = BigInt(quantity) * BigInt(unitCents);
          expect(s !== undefined).toBe(needed > BigInt(budgetCents));
        },
      ),
    );
  });
});

describe('checkout API keys (the Agents page)', () => {
  it('sends the form as typed, trimmed, scopes in the API’s order', () => {
    expect(
      issueInput({
        name: ' ChatGPT ',
        spiffeId: ' spiffe://example.org/ns/ai/sa/procurement-agent/chatgpt',
        agentId: 'agent-chatgpt-01 ',
        scopes: ['spend:read', 'orders:create'],
        ucpProfile: ' https://chatgpt.example/ucp.json ',
      }),
    ).toEqual({
      name: 'ChatGPT',
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/chatgpt',
      agentId: 'agent-chatgpt-01',
      scopes: ['orders:create', 'spend:read'],
      ucpProfile: 'https://chatgpt.example/ucp.json',
    });
    expect(EMPTY_ISSUE.scopes).toEqual(['orders:create', 'orders:read', 'orders:cancel']);
  });

  it('leaves a blank UCP profile out (an unbound key: ACP only)', () => {
    expect(issueInput({ ...EMPTY_ISSUE, ucpProfile: '   ' })).not.toHaveProperty('ucpProfile');
  });

  it('lists active keys first, newest first, then revoked ones', () => {
    const key = (id: string, createdAt: string, revokedAt: string | null = null) =>
      ({
        id,
        name: id,
        spiffeId: 's',
        agentId: 'a',
        scopes: [],
        createdAt,
        createdBy: 'op',
        revokedAt,
        revokedBy: revokedAt ? 'op' : null,
        lastUsedAt: null,
        webhook: null,
        ucpProfile: null,
      }) satisfies CheckoutApiKey;
    const got = keysInOrder([
      key('old', '2026-01-01T00:00:00Z'),
      key('gone', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z'),
      key('new', '2026-01-04T00:00:00Z'),
    ]);
    expect(got.map((k) => k.id)).toEqual(['new', 'old', 'gone']);
  });

  it('finds the API’s refusal of a field by the name it gives', () => {
    const errors = [{ pointer: '/spiffeId', message: 'not the procurement agent' }];
    expect(fieldError(errors, 'spiffeId')).toBe('not the procurement agent');
    expect(fieldError(errors, 'name')).toBeUndefined();
  });
});

describe("the Checkout page's status filter", () => {
  it.each([
    ['OPEN', ['NOT_READY_FOR_PAYMENT', 'READY_FOR_PAYMENT']],
    ['PENDING_APPROVAL', ['PENDING_APPROVAL']],
    ['EXPIRED', ['EXPIRED']],
    ['ANY', null],
    ['something else', ['NOT_READY_FOR_PAYMENT', 'READY_FOR_PAYMENT']],
  ])('asks the API for %s as %j', (filter, statuses) => {
    expect(sessionVariables(filter)).toEqual({ statuses, first: SESSIONS_PAGE });
  });
});
