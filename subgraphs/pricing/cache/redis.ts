import type { Clock } from '../../../lib/clock.ts';
import { type RedisClient, sendEach, slotTag } from '../../../lib/redis.ts';
import { keyField, type PriceKey, type StoredPrice } from '../domain/types.ts';
import {
  decodeFresh,
  decodeJson,
  encodeFresh,
  LAST_KNOWN_TTL_MS,
  PRICE_TTL_MS,
  type PriceCache,
} from './price-cache.ts';

/**
 * Distributed topology: one Redis hash per SKU for fresh entries (`<prefix>price:{sku}`) and one
 * for last-known prices (`<prefix>price-lk:{sku}`), field = [region, customerSegment]. A field
 * carries its own expiry (Redis 7.0 has no per-field TTL); the hash's key TTL, renewed on each
 * write, only collects SKUs nobody asks for. Dropping a SKU is one DEL of two keys. The `{sku}`
 * hash tag (lib/redis.ts slotTag) keeps both keys of a SKU in one Redis Cluster slot; batches of
 * several SKUs go through sendEach (one pipeline, or one write per node on a cluster).
 */
/**
 * Stores one entry: fresh and last-known in one command, instead of four (HSET, PEXPIRE, HSET,
 * PEXPIRE) per miss, and only while the SKU's version (KEYS[3]) is the one the computation read
 * before the catalog (ARGV[6]; empty: store anyway). That check closes the race between
 * replicas: one computes a miss from the old base price while another changes it and drops the
 * SKU; without it the old price would be stored for 60 s.
 */
const STORE = `
if ARGV[6] ~= '' and (redis.call('GET', KEYS[3]) or '0') ~= ARGV[6] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1`;

/** Drops a SKU's entries and moves its version on, in one step (a base price changed). */
const INVALIDATE = `
redis.call('INCR', KEYS[3])
redis.call('DEL', KEYS[1], KEYS[2])
return 1`;

export function createRedisPriceCache(redis: RedisClient, prefix: string, clock: Clock): PriceCache {
  const freshKey = (sku: string) => `${prefix}price:${slotTag(sku)}`;
  const lastKnownKey = (sku: string) => `${prefix}price-lk:${slotTag(sku)}`;
  // Same hash tag: the three keys of a SKU share a Cluster slot, so one script may touch them.
  // No TTL: one small counter per SKU ever changed, and it must outlive any miss in flight.
  const versionKey = (sku: string) => `${prefix}price-v:${slotTag(sku)}`;

  const hgetMany = async (keys: readonly PriceKey[], keyOf: (sku: string) => string) => {
    if (keys.length === 0) return [];
    if (keys.length === 1) {
      const k = keys[0] as PriceKey;
      return [await redis.hget(keyOf(k.sku), keyField(k))];
    }
    return (await sendEach(
      redis,
      keys.map((k) => ['hget', keyOf(k.sku), keyField(k)]),
    )) as (string | null)[];
  };

  return {
    async getMany(keys) {
      const texts = await hgetMany(keys, freshKey);
      const now = clock.now();
      return texts.map((t) => (t === null ? undefined : decodeFresh(t, now)));
    },
    async setMany(entries) {
      if (entries.length === 0) return [];
      const expiresAt = clock.now() + PRICE_TTL_MS;
      const stored = await sendEach(
        redis,
        entries.map(({ key, price, version }) => [
          'eval',
          STORE,
          3,
          freshKey(key.sku),
          lastKnownKey(key.sku),
          versionKey(key.sku),
          keyField(key),
          encodeFresh(expiresAt, price.json),
          price.json,
          PRICE_TTL_MS * 2,
          LAST_KNOWN_TTL_MS,
          version === undefined ? '' : String(version),
        ]),
      );
      return stored.map((r) => r === 1);
    },
    // Only a miss reads versions (one round trip beside its catalog query and store): a HIT,
    // the hot path, reads the fresh entry alone.
    async versions(skus) {
      if (skus.length === 0) return [];
      const texts = (await sendEach(
        redis,
        skus.map((sku) => ['get', versionKey(sku)]),
      )) as (string | null)[];
      return texts.map((t) => Number(t ?? 0));
    },
    async lastKnownMany(keys) {
      const texts = await hgetMany(keys, lastKnownKey);
      return texts.map((t) => (t === null ? undefined : decodeJson(t)));
    },
    async invalidateSkus(skus) {
      if (skus.length === 0) return;
      await sendEach(
        redis,
        skus.map((sku) => ['eval', INVALIDATE, 3, freshKey(sku), lastKnownKey(sku), versionKey(sku)]),
      );
    },
  };
}

export type { StoredPrice };
