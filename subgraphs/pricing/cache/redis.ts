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
 * Stores one entry: fresh and last-known in one command (ioredis sends EVALSHA once the script
 * is cached), instead of four (HSET, PEXPIRE, HSET, PEXPIRE) per miss.
 */
const STORE = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1`;

export function createRedisPriceCache(redis: RedisClient, prefix: string, clock: Clock): PriceCache {
  const freshKey = (sku: string) => `${prefix}price:${slotTag(sku)}`;
  const lastKnownKey = (sku: string) => `${prefix}price-lk:${slotTag(sku)}`;

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
      if (entries.length === 0) return;
      const expiresAt = clock.now() + PRICE_TTL_MS;
      await sendEach(
        redis,
        entries.map(({ key, price }) => [
          'eval',
          STORE,
          2,
          freshKey(key.sku),
          lastKnownKey(key.sku),
          keyField(key),
          encodeFresh(expiresAt, price.json),
          price.json,
          PRICE_TTL_MS * 2,
          LAST_KNOWN_TTL_MS,
        ]),
      );
    },
    async lastKnownMany(keys) {
      const texts = await hgetMany(keys, lastKnownKey);
      return texts.map((t) => (t === null ? undefined : decodeJson(t)));
    },
    async invalidateSkus(skus) {
      if (skus.length === 0) return;
      await sendEach(
        redis,
        skus.map((sku) => ['del', freshKey(sku), lastKnownKey(sku)]),
      );
    },
  };
}

export type { StoredPrice };
