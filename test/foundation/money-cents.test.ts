import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountOf, centsOf, money } from '../../lib/money.ts';

/** The decimal text of an integer amount of cents, e.g. 2299 → "22.99", -5 → "-0.05". */
const text = (c: bigint): string => {
  const sign = c < 0n ? '-' : '';
  const abs = c < 0n ? -c : c;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
};

describe('integer cents of 2-decimal amounts (the quote path)', () => {
  const cents = fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n });

  it('reads back the exact cents of any 2-decimal JSON number up to 10^13', () => {
    fc.assert(
      fc.property(cents, (c) => {
        expect(centsOf(Number(text(c)))).toBe(Number(c));
      }),
      { numRuns: 5000 },
    );
  });

  it('writes the same JSON number as the decimal text (what Decimal.toFixed(2) gave)', () => {
    fc.assert(
      fc.property(cents, (c) => {
        expect(amountOf(Number(c))).toBe(Number(text(c)));
        expect(amountOf(Number(c))).toBe(Number(money(text(c)).toFixed(2)));
      }),
      { numRuns: 5000 },
    );
  });

  it('sums lines exactly where binary floating point does not', () => {
    // 0.1 + 0.2 is 0.30000000000000004 as doubles; in cents it is 30.
    expect(amountOf(centsOf(0.1) + centsOf(0.2))).toBe(0.3);
    expect(amountOf(centsOf(19.99) * 3)).toBe(59.97);
  });
});
