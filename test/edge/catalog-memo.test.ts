import { describe, expect, it } from 'vitest';
import { memoCatalog } from '../../gateway/edge/quote/catalog-memo.ts';
import type { CatalogPort } from '../../gateway/edge/quote/ports.ts';
import { ManualClock } from '../../lib/clock.ts';
import { catalogOf } from './fakes.ts';

function counting(fail = { now: false }) {
  const entries = new Map(catalogOf(5).map((e) => [e.sku, e]));
  const asked: string[][] = [];
  const inner: CatalogPort = {
    async lookup(skus) {
      asked.push([...skus]);
      if (fail.now) throw new Error('catalog down');
      return skus.map((s) => entries.get(s));
    },
  };
  return { inner, asked, entries };
}

const skus = catalogOf(5).map((e) => e.sku);

describe('the edge catalog memo', () => {
  it('asks the store only for SKUs it does not hold, and again after the lifetime', async () => {
    const clock = new ManualClock();
    const { inner, asked } = counting();
    const memo = memoCatalog(inner, clock, 10_000);
    await memo.lookup(skus.slice(0, 3), 'USD');
    const both = await memo.lookup(skus, 'USD');
    expect(both.map((e) => e?.sku)).toEqual(skus);
    expect(asked).toEqual([skus.slice(0, 3), skus.slice(3)]);
    await memo.lookup(skus, 'EUR');
    expect(asked[2]).toEqual(skus);
    clock.advance(10_000);
    await memo.lookup(skus.slice(0, 1), 'USD');
    expect(asked[3]).toEqual(skus.slice(0, 1));
  });

  it('serves stale entries when the store is down, and fails only for what it never held', async () => {
    const clock = new ManualClock();
    const fail = { now: false };
    const { inner } = counting(fail);
    const memo = memoCatalog(inner, clock, 10_000);
    await memo.lookup(skus.slice(0, 2), 'USD');
    clock.advance(60_000);
    fail.now = true;
    expect((await memo.lookup(skus.slice(0, 2), 'USD')).map((e) => e?.sku)).toEqual(skus.slice(0, 2));
    await expect(memo.lookup(skus, 'USD')).rejects.toThrow('catalog down');
  });

  it('drops a SKU at once when its base price changes', async () => {
    const clock = new ManualClock();
    const { inner, asked, entries } = counting();
    const memo = memoCatalog(inner, clock, 10_000);
    await memo.lookup(skus, 'USD');
    const first = entries.get(skus[0] ?? '');
    if (first) entries.set(first.sku, { ...first, basePrice: 1 });
    memo.drop([skus[0] ?? '']);
    const again = await memo.lookup(skus, 'USD');
    expect(asked[1]).toEqual([skus[0]]);
    expect(again[0]?.basePrice).toBe(1);
  });
});
