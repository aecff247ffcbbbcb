import type { RedemptionStore } from './redemptions.ts';

/**
 * A read cache of each customer's redemption counts, for the embedded store only: PGlite is
 * opened by one process, so every write passes through this wrapper and the cache can be kept
 * exact (a write drops the customer's entry; a read that raced a write is not stored). With
 * Postgres, other replicas write too, so it must not be used there. It saves the evaluation of
 * a known customer's basket one query (PGlite blocks the event loop while it runs).
 */
export function withCountCache(store: RedemptionStore, maxCustomers = 10_000): RedemptionStore {
  const cache = new Map<string, Map<string, number>>();
  /** Bumped by every write of a customer, so a read begun before it is not cached. */
  const writes = new Map<string, number>();
  const wrote = (customerId: string) => {
    writes.set(customerId, (writes.get(customerId) ?? 0) + 1);
    cache.delete(customerId);
  };
  return {
    kind: store.kind,
    async countsFor(customerId) {
      const hit = cache.get(customerId);
      if (hit) return new Map(hit);
      const seen = writes.get(customerId) ?? 0;
      const counts = await store.countsFor(customerId);
      if ((writes.get(customerId) ?? 0) === seen) {
        if (cache.size >= maxCustomers) {
          const oldest = cache.keys().next().value;
          if (oldest !== undefined) cache.delete(oldest);
        }
        cache.set(customerId, new Map(counts));
      }
      return counts;
    },
    async redeem(orderId, customerId, items) {
      wrote(customerId);
      try {
        return await store.redeem(orderId, customerId, items);
      } finally {
        wrote(customerId);
      }
    },
    async release(orderId, customerId) {
      wrote(customerId);
      try {
        return await store.release(orderId, customerId);
      } finally {
        wrote(customerId);
      }
    },
  };
}
