/**
 * Amounts as the API prints them (the Decimal scalar: exact decimal text such as "12.50", "440"
 * or "12.5"), compared and multiplied in integer cents, never through a double: 0.1 + 0.2 is
 * not a question a budget check may get wrong.
 */

const AMOUNT = /^(\d+)(?:\.(\d{1,2}))?$/;

/** Cents of a non-negative amount with at most two decimals; undefined for any other text. */
export function centsOf(text: string): bigint | undefined {
  const m = AMOUNT.exec(text.trim());
  if (!m?.[1]) return undefined;
  return BigInt(m[1]) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

/** `132000n` → "1,320.00": two decimals, thousands grouped for reading. */
export function formatCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${whole}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** An amount of the API for reading ("1320" → "1,320.00"); text that is not a cent amount is shown as it came. */
export function formatAmount(text: string): string {
  const cents = centsOf(text);
  return cents === undefined ? text : formatCents(cents);
}
