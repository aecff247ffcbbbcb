/**
 * Token bucket per agent identity (spec, "Limits": rate values not shown; defaults in
 * docs/procurement.md). Pure arithmetic shared by the memory adapter and mirrored by the Redis
 * script, so both give the same answers (one contract test suite runs against both).
 */
export interface BucketPolicy {
  /** Burst size: tokens in a full bucket. */
  readonly capacity: number;
  readonly refillPerSecond: number;
}

export interface BucketState {
  readonly tokens: number;
  /** Epoch ms of the last refill. */
  readonly at: number;
}

export interface TakeResult {
  readonly allowed: boolean;
  /** Whole tokens left after this request. */
  readonly remaining: number;
  /** Ms until one token is available (0 when allowed). */
  readonly retryAfterMs: number;
  /** Ms until the bucket is full again (the RateLimit `t` parameter). */
  readonly resetMs: number;
}

export function refill(s: BucketState | undefined, now: number, p: BucketPolicy): BucketState {
  if (!s) return { tokens: p.capacity, at: now };
  // A clock behind the stored time (another replica's) adds nothing and moves nothing back.
  if (now <= s.at) return s;
  return { tokens: Math.min(p.capacity, s.tokens + ((now - s.at) * p.refillPerSecond) / 1000), at: now };
}

export function take(
  s: BucketState | undefined,
  now: number,
  p: BucketPolicy,
): { state: BucketState; result: TakeResult } {
  const r = refill(s, now, p);
  const allowed = r.tokens >= 1;
  const tokens = allowed ? r.tokens - 1 : r.tokens;
  return { state: { tokens, at: r.at }, result: describe(allowed, tokens, p) };
}

export function describe(allowed: boolean, tokens: number, p: BucketPolicy): TakeResult {
  const perMs = p.refillPerSecond / 1000;
  return {
    allowed,
    remaining: Math.floor(tokens),
    retryAfterMs: allowed ? 0 : Math.ceil((1 - tokens) / perMs),
    resetMs: Math.ceil((p.capacity - tokens) / perMs),
  };
}

/** Real-time lifetime of an idle bucket record: by then it would be full anyway. */
export const idleTtlMs = (p: BucketPolicy): number =>
  Math.max(60_000, Math.ceil((p.capacity / p.refillPerSecond) * 1000) + 1000);
