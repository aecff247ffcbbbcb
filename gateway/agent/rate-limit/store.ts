import type { TakeResult } from './bucket.ts';

/** Token buckets by identity: in memory (embedded) or Redis (shared by every replica). */
export interface BucketStore {
  take(identity: string, now: number): Promise<TakeResult>;
}
