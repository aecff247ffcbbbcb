/**
 * The price cache contract (price-cache.contract.ts) against its adapters here: memory, the real
 * Redis of the machine, and the near cache over Redis; then what the near cache adds. test/cluster/
 * runs the contract against a Redis Cluster.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { createRedis, type RedisClient } from '../../lib/redis.ts';
import { createMemoryPriceCache } from '../../subgraphs/pricing/cache/memory.ts';
import { createNearPriceCache } from '../../subgraphs/pricing/cache/near.ts';
import { PRICE_TTL_MS, type PriceCache } from '../../subgraphs/pricing/cache/price-cache.ts';
import { createRedisPriceCache } from '../../subgraphs/pricing/cache/redis.ts';
import { storedPrice } from '../../subgraphs/pricing/domain/types.ts';
import { key, priceCacheContract, response, versionedPriceCacheContract } from './price-cache.contract.ts';

let redis: RedisClient | undefined;
const prefixes: string[] = [];
afterAll(async () => {
  if (!redis) return;
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  redis.disconnect();
});

function redisCache(clock: ManualClock): PriceCache {
  redis ??= createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false });
  const prefix = uniquePrefix('price-cache');
  prefixes.push(prefix);
  return createRedisPriceCache(redis, prefix, clock);
}

priceCacheContract('memory', (clock) => createMemoryPriceCache(clock));
priceCacheContract('Redis', redisCache);
priceCacheContract('near cache over Redis', (clock) => createNearPriceCache(redisCache(clock), clock, 100));
versionedPriceCacheContract('Redis', redisCache);
versionedPriceCacheContract('near cache over Redis', (clock) =>
  createNearPriceCache(redisCache(clock), clock, 100),
);

/** Counts the shared cache's reads, to see which reads the near cache answers. */
function counted(inner: PriceCache) {
  const reads = { keys: 0 };
  const cache: PriceCache = {
    ...inner,
    getMany: (keys) => {
      reads.keys += keys.length;
      return inner.getMany(keys);
    },
  };
  return { cache, reads };
}

describe('near cache in front of Redis', () => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock();
  });

  it('answers a repeated HIT from memory, with the stored serialisation unchanged', async () => {
    const shared = counted(redisCache(clock));
    const near = createNearPriceCache(shared.cache, clock, 100);
    const p = storedPrice(response('SKU-NNN-000001', 4.5));
    await near.setMany([{ key: key('SKU-NNN-000001'), price: p }]);
    for (let i = 0; i < 5; i++) expect((await near.getMany([key('SKU-NNN-000001')]))[0]?.json).toBe(p.json);
    expect(shared.reads.keys).toBe(0);
  });

  it('keeps an entry another instance stored only until that entry expires in Redis', async () => {
    const sharedCache = redisCache(clock);
    const writer = createNearPriceCache(sharedCache, clock, 100);
    const p = storedPrice(response('SKU-NNN-000002', 7));
    await writer.setMany([{ key: key('SKU-NNN-000002'), price: p }]);
    clock.advance(50_000);
    const shared = counted(sharedCache);
    const reader = createNearPriceCache(shared.cache, clock, 100);
    expect((await reader.getMany([key('SKU-NNN-000002')]))[0]?.json).toBe(p.json);
    expect((await reader.getMany([key('SKU-NNN-000002')]))[0]?.json).toBe(p.json);
    expect(shared.reads.keys).toBe(1);
    // 60 s after the write, not 60 s after this reader first saw it.
    clock.advance(PRICE_TTL_MS - 50_000);
    expect(await reader.getMany([key('SKU-NNN-000002')])).toEqual([undefined]);
  });

  it('forgets a SKU when told (BasePriceChanged from another instance) and reads Redis again', async () => {
    const shared = counted(redisCache(clock));
    const near = createNearPriceCache(shared.cache, clock, 100);
    const old = storedPrice(response('SKU-NNN-000003', 1));
    const other = storedPrice(response('SKU-NNN-000033', 2));
    await near.setMany([
      { key: key('SKU-NNN-000003'), price: old },
      { key: key('SKU-NNN-000033'), price: other },
    ]);
    near.forget(['SKU-NNN-000003']);
    await shared.cache.invalidateSkus(['SKU-NNN-000003']);
    expect(await near.getMany([key('SKU-NNN-000003')])).toEqual([undefined]);
    expect(shared.reads.keys).toBe(1);
    // A SKU whose id starts with the forgotten one keeps its near copy.
    expect((await near.getMany([key('SKU-NNN-000033')]))[0]?.json).toBe(other.json);
    expect(shared.reads.keys).toBe(1);
  });

  it('does not keep a read that raced with a forget', async () => {
    const sharedCache = redisCache(clock);
    const p = storedPrice(response('SKU-NNN-000004', 3));
    await sharedCache.setMany([{ key: key('SKU-NNN-000004'), price: p }]);
    let near: ReturnType<typeof createNearPriceCache> | undefined;
    const slow: PriceCache = {
      ...sharedCache,
      getMany: async (keys) => {
        const got = await sharedCache.getMany(keys);
        near?.forget(['SKU-NNN-000004']); // the event arrives while the read is in flight
        return got;
      },
    };
    const shared = counted(slow);
    near = createNearPriceCache(shared.cache, clock, 100);
    await near.getMany([key('SKU-NNN-000004')]);
    await near.getMany([key('SKU-NNN-000004')]);
    expect(shared.reads.keys).toBe(2);
  });

  it('holds at most its bound of entries, least recently used out first', async () => {
    const shared = counted(redisCache(clock));
    const near = createNearPriceCache(shared.cache, clock, 2);
    const skus = ['SKU-NNN-000005', 'SKU-NNN-000006', 'SKU-NNN-000007'];
    await near.setMany(skus.map((s) => ({ key: key(s), price: storedPrice(response(s, 1)) })));
    await near.getMany(skus.map((s) => key(s)));
    // The first was evicted: one shared read for it, the other two from memory.
    expect(shared.reads.keys).toBe(1);
  });
});
