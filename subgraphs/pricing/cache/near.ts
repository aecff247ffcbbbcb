import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../lib/clock.ts';
import { keyText, type PriceKey, type StoredPrice } from '../domain/types.ts';
import { PRICE_TTL_MS, type PriceCache } from './price-cache.ts';

interface Near {
  price: StoredPrice;
  /** The shared entry's own expiry: a near copy never outlives what Redis would serve. */
  expiresAt: number;
}

export interface NearPriceCache extends PriceCache {
  /** Drops the near copies of these SKUs only (another instance already dropped the shared ones). */
  forget(skus: readonly string[]): void;
}

/**
 * Distributed topology: a bounded in-process LRU of fresh prices in front of the shared (Redis)
 * cache, so a HIT costs a map lookup instead of a network round trip. It serves an entry only
 * until the expiry the shared entry has (never past the spec's 60 s), is dropped by the same
 * BasePriceChanged events as the shared cache, and a read that raced with such a drop is not
 * kept (per-SKU generation). Last-known prices are not kept near: they are read only when
 * pricing is down, and must be the shared ones.
 */
export function createNearPriceCache(shared: PriceCache, clock: Clock, maxEntries: number): NearPriceCache {
  const near = new LRUCache<string, Near>({ max: maxEntries });
  const generations = new Map<string, number>();
  const generationOf = (sku: string) => generations.get(sku) ?? 0;
  const forget = (skus: readonly string[]) => {
    for (const sku of skus) {
      // Bounded like the LRU: a generation only needs to outlive the reads in flight.
      if (generations.size >= maxEntries) generations.clear();
      generations.set(sku, generationOf(sku) + 1);
    }
    // Keys are `[sku, region, segment]` texts: drop every key of these SKUs.
    const prefixes = skus.map((sku) => `${JSON.stringify([sku]).slice(0, -1)},`);
    for (const key of near.keys()) if (prefixes.some((p) => key.startsWith(p))) near.delete(key);
  };

  return {
    async getMany(keys) {
      const now = clock.now();
      const out: (StoredPrice | undefined)[] = new Array(keys.length);
      const missing: PriceKey[] = [];
      const at: number[] = [];
      keys.forEach((k, i) => {
        const hit = near.get(keyText(k));
        if (hit && hit.expiresAt > now) out[i] = hit.price;
        else {
          missing.push(k);
          at.push(i);
        }
      });
      if (missing.length === 0) return out;
      const before = missing.map((k) => generationOf(k.sku));
      const found = await shared.getMany(missing);
      found.forEach((price, j) => {
        const k = missing[j] as PriceKey;
        out[at[j] as number] = price;
        if (price?.expiresAt !== undefined && generationOf(k.sku) === before[j]) {
          near.set(keyText(k), { price, expiresAt: price.expiresAt });
        }
      });
      return out;
    },
    async setMany(entries) {
      const generation = entries.map((e) => generationOf(e.key.sku));
      const stored = await shared.setMany(entries);
      const expiresAt = clock.now() + PRICE_TTL_MS;
      entries.forEach(({ key, price }, i) => {
        // Kept near only what the shared cache took: a refused (stale) price is not served here.
        if (stored[i] && generationOf(key.sku) === generation[i])
          near.set(keyText(key), { price, expiresAt });
      });
      return stored;
    },
    versions: shared.versions && ((skus) => (shared.versions as NonNullable<PriceCache['versions']>)(skus)),
    lastKnownMany: (keys) => shared.lastKnownMany(keys),
    async invalidateSkus(skus) {
      forget(skus);
      await shared.invalidateSkus(skus);
    },
    forget,
  };
}
