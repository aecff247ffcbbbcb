/**
 * The one contract of the price cache: every adapter runs it (memory and the real Redis in
 * cache.test.ts, a real Redis Cluster in test/cluster/). `make` gives a fresh, isolated cache.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import { PRICE_TTL_MS, type PriceCache } from '../../subgraphs/pricing/cache/price-cache.ts';
import { type PriceKey, type PriceResponse, storedPrice } from '../../subgraphs/pricing/domain/types.ts';

export const response = (sku: string, dynamicPrice: number, currency = 'USD'): PriceResponse => ({
  sku,
  basePrice: 10,
  dynamicPrice,
  currency,
  appliedModifiers: [],
  calculatedAt: '2026-01-01T00:00:00.000Z',
});
export const key = (sku: string, region = 'EU', customerSegment = 'VIP'): PriceKey => ({
  sku,
  region,
  customerSegment,
});

export function priceCacheContract(label: string, make: (clock: ManualClock) => PriceCache): void {
  describe(`PriceCache contract: ${label}`, () => {
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
      await cache.setMany([
        { key: key('SKU-AAA-000001', 'EU', 'VIP'), price: storedPrice(response('x', 1)) },
      ]);
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
      expect((await cache.lastKnownMany(keys)).map((p) => p?.json)).toEqual([
        undefined,
        undefined,
        keep.json,
      ]);
    });

    it('handles empty batches without a round trip failing', async () => {
      expect(await cache.getMany([])).toEqual([]);
      await cache.setMany([]);
      await cache.invalidateSkus([]);
      expect(await cache.lastKnownMany([])).toEqual([]);
    });

    it('keeps a SKU whose name holds braces in one slot: stored, read and dropped like any other', async () => {
      const odd = ['}SKU{', '{SKU-ODD}', ''];
      await cache.setMany(odd.map((sku, i) => ({ key: key(sku), price: storedPrice(response(sku, i + 1)) })));
      const got = await cache.getMany(odd.map((sku) => key(sku)));
      expect(got.map((p) => p?.response.dynamicPrice)).toEqual([1, 2, 3]);
      await cache.invalidateSkus(odd.slice(0, 2));
      expect((await cache.lastKnownMany(odd.map((sku) => key(sku)))).map((p) => p?.response.sku)).toEqual([
        undefined,
        undefined,
        '',
      ]);
    });

    it('answers a batch of many SKUs (spread over every node of a cluster) in the order asked', async () => {
      const skus = Array.from({ length: 40 }, (_, i) => `SKU-BAT-${String(i).padStart(6, '0')}`);
      await cache.setMany(skus.map((sku, i) => ({ key: key(sku), price: storedPrice(response(sku, i)) })));
      const got = await cache.getMany(skus.map((sku) => key(sku)).reverse());
      expect(got.map((p) => p?.response.sku)).toEqual([...skus].reverse());
    });
  });
}

/**
 * What a cache shared by several processes adds (PriceCache.versions): a miss stores only while
 * its SKU's version is the one it read before the catalog, so a price computed from a base price
 * another replica changed meanwhile is refused. Redis, the near cache over Redis and Redis
 * Cluster (whose script keys must share a slot) run it.
 */
export function versionedPriceCacheContract(label: string, make: (clock: ManualClock) => PriceCache): void {
  describe(`PriceCache versions: ${label}`, () => {
    let cache: PriceCache;
    const versions = (skus: string[]) => (cache.versions as NonNullable<PriceCache['versions']>)(skus);
    beforeEach(() => {
      cache = make(new ManualClock());
    });

    it('moves a SKU’s version on with each invalidation, and only that SKU’s', async () => {
      const [a0, b0] = await versions(['SKU-VER-000001', 'SKU-VER-000002']);
      await cache.invalidateSkus(['SKU-VER-000001']);
      await cache.invalidateSkus(['SKU-VER-000001']);
      const [a2, b2] = await versions(['SKU-VER-000001', 'SKU-VER-000002']);
      expect([a2, b2]).toEqual([(a0 ?? 0) + 2, b0]);
    });

    it('stores a price read at the current version and refuses one read before an invalidation', async () => {
      const [stale, fresh] = ['SKU-VER-000003', 'SKU-VER-000004'];
      const [vs, vf] = await versions([stale, fresh]);
      // Another replica changes the first SKU's base price after this one read its version.
      await cache.invalidateSkus([stale]);
      const stored = await cache.setMany([
        { key: key(stale), price: storedPrice(response(stale, 1)), version: vs as number },
        { key: key(fresh), price: storedPrice(response(fresh, 2)), version: vf as number },
      ]);
      expect(stored).toEqual([false, true]);
      expect((await cache.getMany([key(stale), key(fresh)])).map((p) => p?.response.dynamicPrice)).toEqual([
        undefined,
        2,
      ]);
      expect((await cache.lastKnownMany([key(stale)]))[0]).toBeUndefined();
      // Read again after the change: stored.
      const [again] = await versions([stale]);
      const retry = await cache.setMany([
        { key: key(stale), price: storedPrice(response(stale, 3)), version: again as number },
      ]);
      expect(retry).toEqual([true]);
      expect((await cache.getMany([key(stale)]))[0]?.response.dynamicPrice).toBe(3);
    });

    it('stores an entry without a version whatever the SKU’s version is', async () => {
      await cache.invalidateSkus(['SKU-VER-000005']);
      expect(
        await cache.setMany([{ key: key('SKU-VER-000005'), price: storedPrice(response('x', 4)) }]),
      ).toEqual([true]);
    });
  });
}
