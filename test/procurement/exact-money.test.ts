/**
 * Exact money at the boundary (issue 13): max_budget_usd is judged on the number as the agent
 * wrote it, must be whole cents, and allocated_budget is that exact value on the way out, in
 * storage and on read-back. Every verdict is checked against a BigInt oracle written apart
 * from the implementation (which uses decimal.js).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { parseStrictJson } from '../../lib/json/strict-json.ts';
import { money, toNumber2 } from '../../lib/money.ts';
import { purchaseOrderResponseJson } from '../../subgraphs/procurement/contract/json.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { validatePurchaseOrderRequest } from '../../subgraphs/procurement/contract/validate.ts';
import { toAmount } from '../../subgraphs/promotions/domain/cents.ts';
import { freshAgent, post } from './support/agent.ts';
import { budgetOracle, centsText } from './support/decimal-oracle.ts';

const bodyWith = (budget: string) =>
  `{"agent_id":"agent-0000001","sku":"SKU-ABC-123456","quantity":5,"max_budget_usd":${budget}}`;

type Verdict = { status: 201; amount: string } | { status: 400 | 422; because: RegExp };
const ok = (amount: string): Verdict => ({ status: 201, amount });
const refused = (because: RegExp): Verdict => ({ status: 422, because });
const malformed: Verdict = { status: 400, because: /out of range/ };

/** Every limit named in the issue and around it; the budget is written exactly as shown. */
const LIMITS: [string, Verdict][] = [
  ['0', refused(/must be > 0/)],
  ['-0', refused(/must be > 0/)],
  ['0.0', refused(/must be > 0/)],
  ['-0.01', refused(/must be > 0/)],
  ['0.001', refused(/at most 2 decimal places/)],
  ['0.009', refused(/at most 2 decimal places/)],
  ['0.01', ok('0.01')],
  ['0.010', ok('0.01')],
  ['1e-2', ok('0.01')],
  ['0.1', ok('0.1')],
  ['250.75', ok('250.75')],
  ['250.750', ok('250.75')],
  ['25075e-2', ok('250.75')],
  ['2.5075E+2', ok('250.75')],
  ['4999.99', ok('4999.99')],
  ['4999.999', refused(/at most 2 decimal places/)],
  // Its nearest double is 5000: a float reader would accept it and allocate 5000.
  ['4999.99999999999999999', refused(/at most 2 decimal places/)],
  ['5000', ok('5000')],
  ['5000.0', ok('5000')],
  ['5000.00', ok('5000')],
  ['5000.000000000000000000000', ok('5000')],
  ['1e3', ok('1000')],
  ['5e3', ok('5000')],
  ['5E+3', ok('5000')],
  ['0.5e4', ok('5000')],
  ['50e2', ok('5000')],
  ['5000.001', refused(/must be <= 5000/)],
  ['5000.01', refused(/must be <= 5000/)],
  // The issue's case: a double reads 5000 and the old validator accepted it.
  ['5000.00000000000000001', refused(/must be <= 5000/)],
  ['5.00000000000000000001e3', refused(/must be <= 5000/)],
  ['5001', refused(/must be <= 5000/)],
  ['1e308', refused(/must be <= 5000/)],
  ['99999999999999999999999999999', refused(/must be <= 5000/)],
  ['1e-300', refused(/at most 2 decimal places/)],
  [`1.${'0'.repeat(2000)}`, ok('1')],
  [`0.${'0'.repeat(300)}1`, refused(/at most 2 decimal places/)],
  // Beyond what a double can hold even approximately: the body itself is refused (documented).
  ['1e400', malformed],
  ['-1e400', malformed],
  ['1e-400', malformed],
  [`0.${'0'.repeat(2000)}1`, malformed],
  ['1e99999999999999999999', malformed],
];

/** The verdict of the parser and contract alone (what the gateway runs before the domain). */
function judge(budget: string): { status: number; amount?: string; detail: string } {
  const parsed = parseStrictJson(bodyWith(budget));
  if (!parsed.ok) return { status: 400, detail: parsed.reason };
  const r = validatePurchaseOrderRequest(parsed.value);
  if (r.ok) return { status: 201, amount: r.value.max_budget_usd, detail: '' };
  return { status: 422, detail: r.errors.map((e) => `${e.pointer} ${e.message}`).join('; ') };
}

const expectation = (v: Verdict) =>
  v.status === 201 ? `201 ${v.amount}` : `${v.status} ${v.because.source}`;
/** Table rows with a readable name (long lexemes shortened). */
const rows = LIMITS.map(([budget, verdict]) => ({
  name: `${budget.length > 32 ? `${budget.slice(0, 12)}…${budget.slice(-4)} (${budget.length} chars)` : budget} → ${expectation(verdict)}`,
  budget,
  verdict,
}));

describe('max_budget_usd at every limit (parser and contract)', () => {
  it.each(rows)('$name', ({ budget, verdict }) => {
    const got = judge(budget);
    expect(got.status, got.detail).toBe(verdict.status);
    if (verdict.status === 201) expect(got.amount).toBe(verdict.amount);
    else expect(got.detail).toMatch(verdict.because);
    if (verdict.status === 422) expect(got.detail).toMatch(/^\/max_budget_usd /);
  });

  it('agrees with the BigInt oracle on every table case it can judge', () => {
    for (const [budget, verdict] of LIMITS) {
      if (verdict.status === 400) continue;
      const o = budgetOracle(budget);
      expect(o.valid, budget).toBe(verdict.status === 201);
      if (verdict.status === 201) expect(o.canonical).toBe(verdict.amount);
    }
  });
});

const digits = (min: number, max: number) =>
  fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));

/** Any JSON number text: sign, integer part, fraction, exponent in each spelling. */
const anyNumberText = fc
  .tuple(
    fc.constantFrom('', '', '-'),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 6)).map(([a, b]) => a + b),
    ),
    fc.option(digits(1, 24), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 })),
      {
        nil: undefined,
      },
    ),
  )
  .map(
    ([sign, int, frac, exp]) =>
      `${sign}${int}${frac === undefined ? '' : `.${frac}`}${exp ? `${exp[0]}${exp[1]}${exp[2]}` : ''}`,
  );

/**
 * Numbers near the limits: a whole-cent value around 0 or 5000 (or anywhere in range), maybe
 * with trailing zeros or a far digit appended, maybe written with an exponent.
 */
const nearLimitText = fc
  .tuple(
    fc.oneof(
      fc.bigInt({ min: -5n, max: 5n }),
      fc.bigInt({ min: 499_995n, max: 500_005n }),
      fc.bigInt({ min: 1n, max: 500_000n }),
    ),
    fc.constantFrom('', '0', '000000', '1', '0000000000000000001', '9'),
    fc.integer({ min: -6, max: 6 }),
  )
  .map(([cents, tail, shift]) => {
    const negative = cents < 0n;
    const abs = negative ? -cents : cents;
    const mantissa = `${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}${tail}`;
    if (shift === 0) return `${negative ? '-' : ''}${mantissa}`;
    // Move the point `shift` places left and say so in the exponent: the same value.
    const [i = '', f = ''] = mantissa.split('.');
    const all = i + f;
    const point = i.length - shift;
    const padded = point <= 0 ? '0'.repeat(1 - point) + all : all.padEnd(point, '0');
    const at = Math.max(point, 1);
    const head = padded.slice(0, at).replace(/^0+(?=\d)/, '') || '0';
    const rest = padded.slice(at);
    return `${negative ? '-' : ''}${head}${rest ? `.${rest}` : ''}e${shift}`;
  });

describe('max_budget_usd, generated (fast-check against the BigInt oracle)', () => {
  it.each([
    ['any JSON number', anyNumberText],
    ['numbers near the limits', nearLimitText],
  ])('%s: 201 exactly when the oracle says (0, 5000] in whole cents, with its exact value', (_n, arb) => {
    fc.assert(
      fc.property(arb, (text) => {
        const o = budgetOracle(text);
        const got = judge(text);
        expect(got.status, `${text}: ${got.detail}`).toBe(o.valid ? 201 : 422);
        if (o.valid) expect(got.amount).toBe(o.canonical);
      }),
      { numRuns: 3000 },
    );
  });

  it('writes allocated_budget as the exact decimal, which every JSON reader reads back as that value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 500_000n }), (cents) => {
        const amount = centsText(cents) as UsdAmount;
        const text = purchaseOrderResponseJson({
          status: 'APPROVED',
          order_id: 'ord_1',
          allocated_budget: amount,
          processed_at: 1.5,
        });
        expect(text).toContain(`"allocated_budget":${amount},`);
        // A whole-cent amount up to 5000 has at most 6 significant digits: a double holds it.
        expect(String(JSON.parse(text).allocated_budget)).toBe(amount);
      }),
    );
  });

  it('refuses to write an amount that is not canonical (no path to a double or to injected JSON)', () => {
    for (const bad of ['250.50', '1e3', '1,5', '0.001', '1}', ''])
      expect(() =>
        purchaseOrderResponseJson({
          status: 'APPROVED',
          order_id: 'ord_1',
          allocated_budget: bad as UsdAmount,
          processed_at: 1,
        }),
      ).toThrow(TypeError);
  });
});

describe('amounts the other services write are exact in their JSON text', () => {
  it('promotions: an amount in cents up to the contract maximum (10,000,000) prints as its decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1_000_000_000n }), (cents) => {
        expect(String(toAmount(Number(cents)))).toBe(centsText(cents));
      }),
      { numRuns: 5000 },
    );
  });

  it('pricing: a 2-decimal price up to the PriceResponse maximum (9,999,999,999,999.99) prints as its decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 999_999_999_999_999n }), (cents) => {
        const text = centsText(cents);
        expect(String(toNumber2(money(text)))).toBe(text);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('over HTTP: the budget sent is the budget allocated, stored and read back', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys.close());

  it.each(LIMITS.filter(([b]) => b.length < 64))(
    'POST with max_budget_usd %s → %j',
    async (budget, verdict) => {
      // A fresh identity per case: refusals must not add up to a block.
      const spiffe = freshAgent('money');
      const r = await post(sys.url, { spiffe, body: bodyWith(budget) });
      expect(r.status, r.text).toBe(verdict.status);
      if (verdict.status !== 201) {
        expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
        if (verdict.status === 422)
          expect(r.json.errors).toEqual(
            expect.arrayContaining([expect.objectContaining({ pointer: '/max_budget_usd' })]),
          );
        return;
      }
      expect(r.text).toContain(`"allocated_budget":${verdict.amount},`);
      const location = r.headers.location ?? '';
      const back = await fetch(`${sys.url}${location}`, { headers: { 'x-spiffe-id': spiffe } });
      expect(await back.text()).toContain(`"allocated_budget":${verdict.amount},`);
      const [row] = await sys.platform.db.query<{ t: string }>(
        'SELECT allocated_budget::text AS t FROM purchase_orders WHERE order_id = $1',
        [r.json.order_id],
      );
      expect(row?.t).toBe(verdict.amount);
    },
  );
});
