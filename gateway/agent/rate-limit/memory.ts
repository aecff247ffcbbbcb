import { BoundedMap } from '../../../lib/bounded-map.ts';
import { type BucketPolicy, type BucketState, refill, take } from './bucket.ts';
import type { BucketStore } from './store.ts';

export function memoryBucketStore(policy: BucketPolicy, maxEntries = 100_000): BucketStore {
  const buckets = new BoundedMap<string, BucketState>(maxEntries);
  return {
    async take(identity, now) {
      const { state, result } = take(buckets.get(identity), now, policy);
      buckets.set(identity, state);
      return result;
    },
    async peek(identity, now) {
      return refill(buckets.get(identity), now, policy).tokens;
    },
  };
}
