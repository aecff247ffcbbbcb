/** The pure parts of spend policies: input checks, candidate subjects, UTC periods, exact cents. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import { judge } from '../../subgraphs/procurement/spend/decide.ts';
import {
  candidateSubjects,
  centsOfText,
  MAX_SUBJECT_SEGMENTS,
  parseSpendPolicy,
  periodWindow,
  textOfCents,
} from '../../subgraphs/procurement/spend/policy.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const NOW = Date.UTC(2026, 0, 15);
const id = (s: string) => {
  const r = parseSpiffeId(s);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

describe('candidate subjects', () => {
  it('lists the identity and each ancestor on a segment boundary, most specific first', () => {
    expect(candidateSubjects(id(`${AGENT}/eu`))).toEqual([
      `${AGENT}/eu`,
      AGENT,
      'spiffe://example.org/ns/ai/sa',
      'spiffe://example.org/ns/ai',
      'spiffe://example.org/ns',
      'spiffe://example.org',
    ]);
  });

  it('never lists a look-alike sibling such as procurement-agent-evil', () => {
    expect(candidateSubjects(id(`${AGENT}-evil`))).not.toContain(AGENT);
  });

  it(`stops at ${MAX_SUBJECT_SEGMENTS} segments, the deepest a policy may name`, () => {
    const deep = id(`spiffe://example.org/${Array.from({ length: 40 }, (_, i) => `s${i}`).join('/')}`);
    const c = candidateSubjects(deep);
    expect(c).toHaveLength(MAX_SUBJECT_SEGMENTS + 1);
    expect(c[0]?.split('/').length).toBe(3 + MAX_SUBJECT_SEGMENTS);
  });
});

describe('periods (UTC)', () => {
  it.each([
    [
      'day',
      Date.UTC(2026, 0, 31, 23, 59, 59, 999),
      'D2026-01-31',
      Date.UTC(2026, 0, 31),
      Date.UTC(2026, 1, 1),
    ],
    ['day', Date.UTC(2026, 1, 1), 'D2026-02-01', Date.UTC(2026, 1, 1), Date.UTC(2026, 1, 2)],
    ['month', Date.UTC(2028, 1, 29, 12), 'M2028-02', Date.UTC(2028, 1, 1), Date.UTC(2028, 2, 1)],
    ['month', Date.UTC(2026, 11, 31, 23), 'M2026-12', Date.UTC(2026, 11, 1), Date.UTC(2027, 0, 1)],
  ] as const)('%s at %d is %s', (period, now, key, start, resetsAt) => {
    expect(periodWindow(period, now)).toEqual({ key, start, resetsAt });
  });
});

describe('exact cents', () => {
  it.each([
    ['0.01', 1],
    ['250.5', 25050],
    ['250.50', 25050],
    ['1000000000.00', 100_000_000_000],
    ['5000', 500000],
  ])('reads %s as %d cents', (text, cents) => {
    expect(centsOfText(text)).toBe(cents);
  });

  it.each(['0.001', '1e3', '-1', '01.00', '1.', '.5', ' 1', '1,00', 'NaN', ''])('refuses %j', (text) => {
    expect(centsOfText(text)).toBeUndefined();
  });

  it('prints and reads back every amount exactly (against a BigInt oracle)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000_000_000 }), (cents) => {
        const text = textOfCents(cents);
        const big = BigInt(cents);
        expect(text).toBe(`${big / 100n}.${String(big % 100n).padStart(2, '0')}`);
        expect(centsOfText(text)).toBe(cents);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('an operator input', () => {
  const valid = { subject: AGENT, currency: 'USD', period: 'day', budget: '100.00' };
  const parse = (over: Record<string, unknown>) =>
    parseSpendPolicy({ ...valid, ...over }, ['example.org'], NOW);

  it('becomes a policy in cents, with only the limits given', () => {
    expect(
      parse({
        maxPerOrder: '25',
        expiresAt: '2026-02-01T00:00:00+01:00',
        allowedSkuPrefixes: ['SKU-ELC-', 'SKU-ELC-'],
      }),
    ).toEqual({
      ok: true,
      policy: {
        subject: AGENT,
        currency: 'USD',
        period: 'day',
        budgetCents: 100_00,
        maxPerOrderCents: 25_00,
        expiresAt: Date.UTC(2026, 0, 31, 23),
        skuPrefixes: ['SKU-ELC-'],
        updatedAt: NOW,
      },
    });
    expect(parse({})).toMatchObject({ ok: true, policy: { budgetCents: 100_00 } });
  });

  it.each([
    ['subject', { subject: 'spiffe://example.org/ns/../x' }, '/subject'],
    ['subject', { subject: 42 }, '/subject'],
    ['period', { period: 'week' }, '/period'],
    ['currency', { currency: 'usd' }, '/currency'],
    ['budget', { budget: 100 }, '/budget'],
    ['budget', { budget: '100.001' }, '/budget'],
    ['maxPerOrder', { maxPerOrder: '0.00' }, '/maxPerOrder'],
    ['expiresAt', { expiresAt: 'tomorrow' }, '/expiresAt'],
    ['expiresAt', { expiresAt: '2026-01-15T00:00:00Z' }, '/expiresAt'],
    ['allowedSkuPrefixes', { allowedSkuPrefixes: 'SKU-' }, '/allowedSkuPrefixes'],
    ['allowedSkuPrefixes', { allowedSkuPrefixes: ['SKU-ELC-1234567'] }, '/allowedSkuPrefixes/0'],
    ['allowedSkuPrefixes', { allowedSkuPrefixes: Array(33).fill('SKU-') }, '/allowedSkuPrefixes'],
  ])('refuses a bad %s with its pointer', (_f, over, pointer) => {
    const r = parse(over);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer)).toContain(pointer);
  });

  it('reports every violation at once', () => {
    const r = parse({ currency: 'EUR', period: 'year', budget: 'x' });
    expect(r.ok ? [] : r.errors.map((e) => e.pointer)).toEqual(['/currency', '/period', '/budget']);
  });

  it('never throws and never accepts a budget it cannot hold exactly (fuzz)', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (budget, maxPerOrder, prefixes) => {
        const r = parse({ budget, maxPerOrder, allowedSkuPrefixes: prefixes });
        if (r.ok) {
          expect(textOfCents(r.policy.budgetCents)).toMatch(/^\d+\.\d\d$/);
          expect(centsOfText(String(budget))).toBe(r.policy.budgetCents);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('judging an order', () => {
  const policy = {
    subject: AGENT,
    currency: 'USD' as const,
    period: 'day' as const,
    budgetCents: 100_00,
    updatedAt: 0,
  };
  it('never lets spent plus an accepted amount pass the budget (fuzz)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200_00 }),
        fc.integer({ min: 1, max: 200_00 }),
        (spent, amount) => {
          const verdict = judge(policy, spent, 'SKU-ELC-000001', amount, 0);
          expect(verdict === null).toBe(spent + amount <= 100_00);
        },
      ),
    );
  });
});
