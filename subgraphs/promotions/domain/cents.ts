/**
 * Exact money in integer cents. Amounts stay JS integers (exact up to 2^53, far above the
 * contract's bounds); products that could leave that range fall back to BigInt, so no result
 * ever depends on binary floating point.
 */

const AMOUNT = /^(-?)(\d{1,15})(?:\.(\d{1,2}))?$/;

/** Cents of a decimal amount with at most 2 decimals, or undefined when it has more or is not one. */
export function parseCents(value: number | string): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    // Fast path, no string: c / 100 is correctly rounded, so when it gives back the number, the
    // number is the double of the 2-decimal amount c / 100, and below 1e13 (ulp < 0.002) no other
    // 2-decimal amount has that double: the same answer the text gives, without the regex.
    const c = Math.round(value * 100);
    if (Math.abs(value) <= 1e13 && c / 100 === value) return c + 0; // + 0: -0 → 0
  }
  // String(19.99) is the shortest text that round-trips, "19.99": parsing it is exact.
  const m = AMOUNT.exec(typeof value === 'number' ? String(value) : value.trim());
  if (!m) return undefined;
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] === '-' && cents !== 0 ? -cents : cents;
}

/**
 * The JSON number for an amount in cents. IEEE division is correctly rounded, so `cents / 100`
 * is the double nearest to the decimal value: the same number parsing "x.yz" gives, exactly.
 */
export const toAmount = (cents: number): number => cents / 100;

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
 * Splits `total` cents across `weights` (each ≥ 0, total ≤ their sum) in proportion, by
 * cumulative rounding: share i = round(T·Cᵢ/S) − round(T·Cᵢ₋₁/S), Cᵢ the running sum of the
 * weights, rounding half up. The shares telescope to exactly `total`; each is its exact
 * proportional value rounded down or up (so never above its weight, never negative). One pass,
 * no sorting (the largest-remainder method sorts), deterministic.
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  const shares = new Array<number>(weights.length).fill(0);
  allocateInto(total, weights, shares);
  return shares;
}

/** allocate() writing the shares into `out` (every slot of `weights` is written). */
export function allocateInto(total: number, weights: readonly number[], out: number[]): void {
  const n = weights.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weights[i] as number;
  if (total <= 0 || sum <= 0) {
    for (let i = 0; i < n; i++) out[i] = 0;
    return;
  }
  if (total >= sum) {
    for (let i = 0; i < n; i++) out[i] = weights[i] as number;
    return;
  }
  if (!Number.isSafeInteger(total * sum)) {
    allocateBig(total, weights, sum).forEach((share, i) => {
      out[i] = share;
    });
    return;
  }
  let running = 0;
  let before = 0;
  for (let i = 0; i < n; i++) {
    running += weights[i] as number;
    const upTo = roundDiv(total * running, sum);
    out[i] = upTo - before;
    before = upTo;
  }
}

/** round-half-up(a / b) for safe non-negative integers: the double quotient, corrected exactly. */
function roundDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  let rest = a - q * b;
  if (rest < 0) {
    q -= 1;
    rest += b;
  } else if (rest >= b) {
    q += 1;
    rest -= b;
  }
  return rest * 2 >= b ? q + 1 : q;
}

/** allocate() where total × sum leaves the exact range of doubles: the same method in BigInt. */
function allocateBig(total: number, weights: readonly number[], sum: number): number[] {
  const t = BigInt(total);
  const s = BigInt(sum);
  let running = 0n;
  let before = 0n;
  return weights.map((w) => {
    running += BigInt(w);
    const upTo = (2n * t * running + s) / (2n * s);
    const share = Number(upTo - before);
    before = upTo;
    return share;
  });
}
