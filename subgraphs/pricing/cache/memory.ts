import type { Clock } from '../../../lib/clock.ts';
import { keyField, type StoredPrice } from '../domain/types.ts';
import { PRICE_TTL_MS, type PriceCache } from './price-cache.ts';

interface Entry {
  expiresAt: number;
  price: StoredPrice;
}

/**
 * Embedded topology: the cache in process memory. Bounded: past `maxEntries` fresh entries,
 * expired ones are swept, then the oldest SKUs go; last-known prices are bounded the same way.
 */
export function createMemoryPriceCache(clock: Clock, maxEntries = 200_000): PriceCache {
  const fresh = new Map<string, Map<string, Entry>>();
  const lastKnown = new Map<string, Map<string, StoredPrice>>();
  let size = 0;

  const sweep = () => {
    const now = clock.now();
    for (const [sku, entries] of fresh) {
      for (const [field, e] of entries) {
        if (e.expiresAt <= now) {
          entries.delete(field);
          size--;
        }
      }
      if (entries.size === 0) fresh.delete(sku);
    }
    for (const [sku, entries] of fresh) {
      if (size <= maxEntries / 2) break;
      size -= entries.size;
      fresh.delete(sku);
    }
    while (lastKnown.size > maxEntries / 4) {
      const oldest = lastKnown.keys().next().value;
      if (oldest === undefined) break;
      lastKnown.delete(oldest);
    }
  };

  return {
    async getMany(keys) {
      const now = clock.now();
      return keys.map((k) => {
        const e = fresh.get(k.sku)?.get(keyField(k));
        return e && e.expiresAt > now ? e.price : undefined;
      });
    },
    async setMany(entries) {
      const expiresAt = clock.now() + PRICE_TTL_MS;
      for (const { key, price } of entries) {
        const field = keyField(key);
        const bySku = fresh.get(key.sku) ?? new Map<string, Entry>();
        fresh.set(key.sku, bySku);
        if (!bySku.has(field)) size++;
        bySku.set(field, { expiresAt, price });
        const known = lastKnown.get(key.sku) ?? new Map<string, StoredPrice>();
        lastKnown.set(key.sku, known);
        known.set(field, price);
      }
      if (size > maxEntries) sweep();
      return entries.map(() => true);
    },
    async lastKnownMany(keys) {
      return keys.map((k) => lastKnown.get(k.sku)?.get(keyField(k)));
    },
    async invalidateSkus(skus) {
      for (const sku of skus) {
        size -= fresh.get(sku)?.size ?? 0;
        fresh.delete(sku);
        lastKnown.delete(sku);
      }
    },
  };
}
