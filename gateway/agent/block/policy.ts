/**
 * Repeated-failure protection (spec, "Errors"): more than 5 consecutive contract-validation
 * errors block the identity for 15 minutes. Pure state transitions; the stores apply them.
 */
export interface BlockPolicy {
  /** Errors allowed in a row; one more blocks. */
  readonly maxConsecutiveErrors: number;
  readonly blockMs: number;
}

export const SPEC_BLOCK_POLICY: BlockPolicy = Object.freeze({
  maxConsecutiveErrors: 5,
  blockMs: 15 * 60_000,
});

export interface BlockState {
  /** Consecutive errors since the last valid request or the last block. */
  readonly count: number;
  /** Epoch ms until which the identity is blocked; 0 when not blocked. */
  readonly until: number;
}

export const EMPTY_BLOCK: BlockState = Object.freeze({ count: 0, until: 0 });

export const isBlocked = (s: BlockState, now: number): boolean => s.until > now;

/** One more error. While blocked nothing changes (a blocked agent cannot extend its block). */
export function afterError(s: BlockState, now: number, p: BlockPolicy): BlockState {
  if (isBlocked(s, now)) return s;
  const count = s.count + 1;
  return count > p.maxConsecutiveErrors ? { count: 0, until: now + p.blockMs } : { count, until: 0 };
}
