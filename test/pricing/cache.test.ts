import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import { createRedis, type RedisClient } from '../../lib/redis.ts';
import { createMemoryPriceCache } from '../../subgraphs/pricing/cache/memory.ts';
import { createNearPriceCache } from '../../subgraphs/pricing/cache/near.ts';
import { PRICE_TTL_MS, type PriceCache } from '../../subgraphs/pricing/cache/price-cache.ts';
import { createRedisPriceCache } from '../../subgraphs/pricing/cache/redis.ts';
import { type PriceKey, type PriceResponse, storedPrice } from '../../subgraphs/pricing/domain/types.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../support/services.ts';

const response = (sku: string, dynamicPrice: number, currency = 'USD'): PriceResponse => ({
  sku,
  basePrice: 10,
  dynamicPrice,
  currency,
  appliedModifiers: [],
  calculatedAt: '2026-01-01T00:00:00.000Z',
});
const key = (sku: string, region = 'EU', customerSegment = 'VIP'): PriceKey => ({
  sku,
  region,
  customerSegment,
});

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

const adapters: [string, (clock: ManualClock) => PriceCache][] = [
  ['memory', (clock) => createMemoryPriceCache(clock)],
  ['Redis', redisCache],
  ['near cache over Redis', (clock) => createNearPriceCache(redisCache(clock), clock, 100)],
];

describe.each(adapters)('PriceCache contract: %s', (_name, make) => {
  let clock: ManualClock;
  let cache: PriceCache;
  beforeEach(() => {
    clock = new ManualClock();
    cache = make(clock);
  });

  it('returns nothing for a key never stored', async () => {
    expect(await cache.getMany([key('SKU-AAA-000001')])).toEqual([undefined]);
    expect(await cache.lastKnownMany([key('SKU-AAA-000001')])).toEqual([undefined]);
  });

  it('returns the stored serialisation byte for byte, in the order asked', async () => {
    const a = storedPrice(response('SKU-AAA-000001', 1.5));
    const b = storedPrice(response('SKU-AAA-000002', 2.25));
    await cache.setMany([
      { key: key('SKU-AAA-000001'), price: a },
      { key: key('SKU-AAA-000002'), price: b },
    ]);
    const got = await cache.getMany([key('SKU-AAA-000002'), key('SKU-AAA-000003'), key('SKU-AAA-000001')]);
    expect(got.map((p) => p?.json)).toEqual([b.json, undefined, a.json]);
    expect(got[0]?.response).toEqual(b.response);
  });

  it('keys by sku, region and segment only: each differing part is another entry', async () => {
    await cache.setMany([{ key: key('SKU-AAA-000001', 'EU', 'VIP'), price: storedPrice(response('x', 1)) }]);
    const got = await cache.getMany([
      key('SKU-AAA-000001', 'EU', 'VIP'),
      key('SKU-AAA-000001', 'US', 'VIP'),
      key('SKU-AAA-000001', 'EU', 'STANDARD'),
      key('SKU-AAA-000002', 'EU', 'VIP'),
      // No separator trick makes two keys collide.
      key('SKU-AAA-000001', 'EU","VIP', ''),
    ]);
    expect(got.map((p) => p !== undefined)).toEqual([true, false, false, false, false]);
  });

  it('keeps an entry fresh for 60 seconds and no longer, but keeps its last-known price', async () => {
    const p = storedPrice(response('SKU-AAA-000001', 3));
    await cache.setMany([{ key: key('SKU-AAA-000001'), price: p }]);
    clock.advance(PRICE_TTL_MS - 1);
    expect((await cache.getMany([key('SKU-AAA-000001')]))[0]?.json).toBe(p.json);
    clock.advance(1);
    expect(await cache.getMany([key('SKU-AAA-000001')])).toEqual([undefined]);
    expect((await cache.lastKnownMany([key('SKU-AAA-000001')]))[0]?.json).toBe(p.json);
  });

  it('replaces an entry and restarts its lifetime when stored again', async () => {
    await cache.setMany([{ key: key('SKU-AAA-000001'), price: storedPrice(response('a', 1)) }]);
    clock.advance(30_000);
    const second = storedPrice(response('a', 2));
    await cache.setMany([{ key: key('SKU-AAA-000001'), price: second }]);
    clock.advance(45_000);
    expect((await cache.getMany([key('SKU-AAA-000001')]))[0]?.json).toBe(second.json);
  });

  it('drops every fresh and last-known entry of an invalidated SKU and nothing else', async () => {
    const keep = storedPrice(response('SKU-AAA-000002', 9));
    await cache.setMany([
      { key: key('SKU-AAA-000001', 'EU', 'VIP'), price: storedPrice(response('a', 1)) },
      { key: key('SKU-AAA-000001', 'US', 'STANDARD'), price: storedPrice(response('a', 1)) },
      { key: key('SKU-AAA-000002'), price: keep },
    ]);
    await cache.invalidateSkus(['SKU-AAA-000001']);
    const keys = [
      key('SKU-AAA-000001', 'EU', 'VIP'),
      key('SKU-AAA-000001', 'US', 'STANDARD'),
      key('SKU-AAA-000002'),
    ];
    expect((await cache.getMany(keys)).map((p) => p?.json)).toEqual([undefined, undefined, keep.json]);
    expect((await cache.lastKnownMany(keys)).map((p) => p?.json)).toEqual([undefined, undefined, keep.json]);
  });

  it('handles empty batches without a round trip failing', async () => {
    expect(await cache.getMany([])).toEqual([]);
    await cache.setMany([]);
    await cache.invalidateSkus([]);
    expect(await cache.lastKnownMany([])).toEqual([]);
  });
});

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
