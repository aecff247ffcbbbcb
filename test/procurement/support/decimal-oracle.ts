/**
 * An independent oracle for budgets, in BigInt only (the implementation uses decimal.js): a
 * JSON number's text becomes sign × coefficient × 10^exponent, and the spec's rule plus the
 * documented whole-cents rule are decided on integers.
 */

const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
const MAX_CENTS = 500_000n;

export interface BudgetVerdict {
  /** The spec's (0, 5000] and whole cents. */
  readonly valid: boolean;
  /** The amount in shortest plain decimal text, when valid ("250.5", "1000"). */
  readonly canonical?: string;
  /** Exact cents when the value is whole cents (any sign, any size). */
  readonly cents?: bigint;
}

/** Exact value of a JSON number's text as an integer count of cents, or undefined when it has sub-cent digits. */
export function centsOf(text: string): bigint | undefined {
  const m = JSON_NUMBER.exec(text);
  if (!m) throw new Error(`not a JSON number: ${text}`);
  const [, sign, int = '', frac = '', exp = '0'] = m;
  const coefficient = BigInt(int + frac);
  const shift = Number(exp) - frac.length + 2; // value × 100 = coefficient × 10^shift
  let cents: bigint;
  if (coefficient === 0n) cents = 0n;
  else if (shift >= 0) cents = coefficient * 10n ** BigInt(shift);
  else {
    const divisor = 10n ** BigInt(-shift);
    if (coefficient % divisor !== 0n) return undefined;
    cents = coefficient / divisor;
  }
  return sign === '-' ? -cents : cents;
}

export function centsText(cents: bigint): string {
  const whole = cents / 100n;
  const rest = cents % 100n;
  if (rest === 0n) return whole.toString();
  return `${whole}.${rest.toString().padStart(2, '0').replace(/0$/, '')}`;
}

export function budgetOracle(text: string): BudgetVerdict {
  const cents = centsOf(text);
  if (cents === undefined) return { valid: false };
  const valid = cents > 0n && cents <= MAX_CENTS;
  return valid ? { valid, canonical: centsText(cents), cents } : { valid, cents };
}
