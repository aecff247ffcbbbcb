/**
 * When a failed delivery is tried again: exponential backoff with full jitter (the wait is
 * uniformly random between 0 and the ceiling), so receivers recovering from an outage are not
 * hit by every sender at the same instant. Pure: the random source is given.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Ceiling of the wait after the first failed attempt; doubles after each further one. */
  readonly baseMs: number;
  readonly maxDelayMs: number;
}

/** Ceiling of the wait after failed attempt `attempt` (1-based). */
export const backoffCeilingMs = (policy: RetryPolicy, attempt: number): number =>
  Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attempt - 1, 52));

/** The wait after failed attempt `attempt`, or undefined when it was the last one allowed. */
export function nextRetryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  return Math.floor(random() * backoffCeilingMs(policy, attempt));
}
