import type { BlockState } from './policy.ts';

/**
 * Where block counts live: in memory (embedded) or in Redis (distributed: every replica sees
 * the same count and the same block). Both adapters run test/procurement/state-stores.test.ts.
 */
export interface BlockStore {
  /** Current state of an identity (count and block expiry). */
  get(identity: string, now: number): Promise<BlockState>;
  /** Records one contract error; returns the state after it (blocked when until > now). */
  recordError(identity: string, now: number): Promise<BlockState>;
  /** A valid request: the consecutive count starts again (an active block stays). */
  reset(identity: string): Promise<void>;
  /**
   * An operator's unblock: the block and the consecutive count both go. Returns the state
   * before (so the caller can say whether it was blocked). Idempotent.
   */
  clear(identity: string): Promise<BlockState>;
}
