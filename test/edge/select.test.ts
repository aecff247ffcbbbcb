import { describe, expect, it } from 'vitest';
import type { CatalogEntry, LivePrice, Price } from '../../gateway/edge/quote/ports.ts';
import { selectPrice } from '../../gateway/edge/quote/select.ts';

const entry: CatalogEntry = {
  sku: 'SKU-ABC-000001',
  name: 'Widget',
  category: 'tools',
  inventoryLevel: 5,
  basePrice: 19.99,
};
const price = (dynamicPrice: number, currency = 'USD'): Price => ({
  sku: entry.sku,
  basePrice: 19.99,
  dynamicPrice,
  currency,
  appliedModifiers: ['SCARCITY_SURCHARGE_15'],
});
const live = (p: Price, cached = false): LivePrice => ({ price: p, cached });

describe('selecting a line price (pricing behaviour 8)', () => {
  it.each<[string, Parameters<typeof selectPrice>[1], { source: string; unitPrice: number } | undefined]>([
    [
      'a fresh cached price first',
      { fresh: price(22.99), live: live(price(1)), entry },
      { source: 'cache', unitPrice: 22.99 },
    ],
    [
      'a cached price in another currency is passed over',
      { fresh: price(20, 'EUR'), live: live(price(22.99)), entry },
      { source: 'live', unitPrice: 22.99 },
    ],
    [
      'a live price pricing served from its cache is `cache`',
      { live: live(price(22.99), true), entry },
      { source: 'cache', unitPrice: 22.99 },
    ],
    [
      'a live price',
      { live: live(price(22.99)), lastKnown: price(1), entry },
      { source: 'live', unitPrice: 22.99 },
    ],
    [
      'the last-known price when pricing failed for the line',
      { live: { error: 'down' }, lastKnown: price(21.5), entry },
      { source: 'last_known', unitPrice: 21.5 },
    ],
    [
      'the last-known price when pricing did not answer',
      { lastKnown: price(21.5), entry },
      { source: 'last_known', unitPrice: 21.5 },
    ],
    [
      'a last-known price in another currency is passed over',
      { lastKnown: price(21.5, 'EUR'), entry },
      { source: 'static', unitPrice: 19.99 },
    ],
    ['the static base price, without modifiers, last', { entry }, { source: 'static', unitPrice: 19.99 }],
    [
      'nothing when the catalog has no price either',
      { entry: { ...entry, basePrice: undefined } as CatalogEntry },
      undefined,
    ],
  ])('%s', (_name, found, expected) => {
    const selected = selectPrice('USD', found);
    if (expected === undefined) expect(selected).toBeUndefined();
    else expect(selected).toMatchObject(expected);
    if (selected?.source === 'static') expect(selected.appliedModifiers).toEqual([]);
  });
});
