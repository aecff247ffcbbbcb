import type { Decimal } from 'decimal.js';
import type { Db } from '../../../lib/db/index.ts';
import { money } from '../../../lib/money.ts';
import { NoBasePrice, UnknownSku } from '../domain/errors.ts';
import type { Catalog, CatalogPrice, Product } from './catalog.ts';

/**
 * Embedded topology: the catalog held in memory in front of its PGlite store. PGlite lives inside
 * this one process and every write to the catalog goes through `setBasePrice` below, so the
 * mirror is exact, not a cache that can go stale; it is loaded once at start and updated after
 * each committed write (a catalog import's commit reloads the SKUs it changed: `reload`). Why: PGlite runs queries on the event loop (~0.25 ms per lookup), which
 * would serialise every cache miss; from memory a miss costs microseconds. Never used with
 * PostgreSQL, where other processes write.
 */
export async function createMirroredCatalog(db: Db, store: Catalog): Promise<Catalog> {
  if (db.kind !== 'pglite') throw new Error('the catalog mirror is for the embedded store only');
  const products = new Map<string, Product>();
  // One flat map of exact decimal texts, `sku currency` → amount: tens of thousands of prices
  // held as Decimal objects in a Map per SKU cost ~30 MB of heap; as strings, a few. A Decimal
  // is made from the text when a price is read (microseconds, once per cache miss).
  const prices = new Map<string, string>();
  const currencies = new Set<string>();
  const key = (sku: string, currency: string) => `${sku} ${currency}`;
  const put = (sku: string, currency: string, amount: string) => {
    currencies.add(currency);
    prices.set(key(sku, currency), amount);
  };
  /** Every SKU, or those given: their rows as the store has them now (absent ones forgotten). */
  const load = async (skus?: readonly string[]) => {
    const only = skus ? ' WHERE sku = ANY($1::text[])' : '';
    const params = skus ? [skus] : [];
    const productRows = await db.query<{
      sku: string;
      name: string;
      category: string;
      inventory_level: number;
    }>(`SELECT sku, name, category, inventory_level FROM catalog_products${only}`, params);
    const priceRows = await db.query<{ sku: string; currency: string; amount: string }>(
      `SELECT sku, currency, amount::text AS amount FROM catalog_base_prices${only}`,
      params,
    );
    for (const sku of skus ?? []) {
      products.delete(sku);
      for (const c of currencies) prices.delete(key(sku, c));
    }
    for (const r of productRows)
      products.set(r.sku, {
        sku: r.sku,
        name: r.name,
        category: r.category,
        inventoryLevel: Number(r.inventory_level),
      });
    for (const r of priceRows) put(r.sku, r.currency, r.amount);
  };
  await load();
  const amountOf = (sku: string, currency: string): Decimal | undefined => {
    const text = prices.get(key(sku, currency));
    return text === undefined ? undefined : money(text);
  };

  const sorted = (sku: string): CatalogPrice[] => {
    const out: CatalogPrice[] = [];
    for (const currency of [...currencies].sort()) {
      const amount = amountOf(sku, currency);
      if (amount) out.push({ sku, currency, amount });
    }
    return out;
  };

  return {
    async basePrices(requests) {
      return requests.map((r) => {
        const amount = amountOf(r.sku, r.currency);
        if (amount) return amount;
        return products.has(r.sku) ? new NoBasePrice(r.sku, r.currency) : new UnknownSku(r.sku);
      });
    },
    async products(skus) {
      return skus.map((s) => products.get(s));
    },
    async pricesOf(skus) {
      return skus.map(sorted);
    },
    async setBasePrice(sku, currency, amount) {
      const change = await store.setBasePrice(sku, currency, amount);
      put(sku, currency, change.amount.toFixed());
      return change;
    },
    count: async () => products.size,
    async reload(skus) {
      for (let i = 0; i < skus.length; i += 5000) await load(skus.slice(i, i + 5000));
    },
  };
}
