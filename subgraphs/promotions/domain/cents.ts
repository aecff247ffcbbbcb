/**
 * Exact money in integer cents. Amounts stay JS integers (exact up to 2^53, far above the
 * contract's bounds); products that could leave that range fall back to BigInt, so no result
 * ever depends on binary floating point.
 */

const AMOUNT = /^(-?)(\d{1,15})(?:\.(\d{1,2}))?$/;

/** Cents of a decimal amount with at most 2 decimals, or undefined when it has more or is not one. */
export function parseCents(value: number | string): number | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  // String(19.99) is the shortest text that round-trips, "19.99": parsing it is exact.
  const m = AMOUNT.exec(typeof value === 'number' ? String(value) : value.trim());
  if (!m) return undefined;
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] === '-' && cents !== 0 ? -cents : cents;
}

/** A JSON number with at most 2 decimals for an amount in cents (exact text, parsed once). */
export function toAmount(cents: number): number {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return Number(`${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`);
}

/** Percentages are held as integers in millionths of the whole (12.5 % → 125,000). */
export const PERCENT_SCALE = 1_000_000;

/** round-half-up(cents × part / PERCENT_SCALE) for non-negative operands, exactly. */
export function percentOf(cents: number, part: number): number {
  const product = cents * part;
  if (Number.isSafeInteger(product)) {
    const rest = product % PERCENT_SCALE;
    return (product - rest) / PERCENT_SCALE + (rest * 2 >= PERCENT_SCALE ? 1 : 0);
  }
  const big = BigInt(cents) * BigInt(part);
  const scale = BigInt(PERCENT_SCALE);
  return Number(big / scale + ((big % scale) * 2n >= scale ? 1n : 0n));
}

/**
 * Splits `total` cents across `weights` (each ≥ 0, total ≤ their sum) in proportion, by the
 * largest-remainder method: every share is at most its weight and the shares add up to `total`
 * exactly. Ties go to the earlier index, so the split is deterministic.
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (total <= 0 || sum <= 0) return weights.map(() => 0);
  if (total >= sum) return [...weights];
  const safe = Number.isSafeInteger(total * sum);
  const shares: number[] = new Array(weights.length);
  const remainders: number[] = new Array(weights.length);
  let given = 0;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i] ?? 0;
    let share: number;
    let rest: number;
    if (safe) {
      const p = total * w;
      rest = p % sum;
      share = (p - rest) / sum;
    } else {
      const p = BigInt(total) * BigInt(w);
      const s = BigInt(sum);
      share = Number(p / s);
      // Only the order of remainders matters; scale them into a safe range.
      rest = Number(((p % s) * 1_000_000n) / s);
    }
    shares[i] = share;
    remainders[i] = rest;
    given += share;
  }
  let left = total - given;
  if (left > 0) {
    const order = weights
      .map((_, i) => i)
      .sort((a, b) => (remainders[b] ?? 0) - (remainders[a] ?? 0) || a - b);
    for (const i of order) {
      if (left === 0) break;
      if ((remainders[i] ?? 0) > 0 || (shares[i] ?? 0) < (weights[i] ?? 0)) {
        shares[i] = (shares[i] ?? 0) + 1;
        left--;
      }
    }
  }
  return shares;
}
