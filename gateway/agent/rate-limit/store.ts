import type { TakeResult } from './bucket.ts';

/** Token buckets by identity: in memory (embedded) or Redis (shared by every replica). */
export interface BucketStore {
  take(identity: string, now: number): Promise<TakeResult>;
  /** Tokens in the bucket at `now` (refilled, never above capacity), taking none: the operator view. */
  peek(identity: string, now: number): Promise<number>;
}
