import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { money } from '../../lib/money.ts';
import {
  type Catalog,
  countingCatalog,
  createSqlCatalog,
  seedCatalog,
} from '../../subgraphs/pricing/catalog/catalog.ts';
import {
  CATALOG_CATEGORIES,
  CATALOG_CURRENCIES,
  generateCatalog,
  generateProducts,
  streamProducts,
} from '../../subgraphs/pricing/catalog/generate.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { createMirroredCatalog } from '../../subgraphs/pricing/catalog/mirror.ts';
import { SERIES, VOCABULARY } from '../../subgraphs/pricing/catalog/seed/vocabulary.ts';
import { NoBasePrice, UnknownSku } from '../../subgraphs/pricing/domain/errors.ts';

const SKU = /^SKU-[A-Z]{3}-\d{6}$/;

describe('generated catalog', () => {
  const products = generateCatalog(10_000);

  it('has 10,000 distinct SKUs in the spec format', () => {
    expect(products).toHaveLength(10_000);
    expect(new Set(products.map((p) => p.sku)).size).toBe(10_000);
    for (const p of products) expect(p.sku).toMatch(SKU);
  });

  it('spreads products over every category and currency, with some prices missing on purpose', () => {
    expect(new Set(products.map((p) => p.category))).toEqual(new Set(CATALOG_CATEGORIES));
    const priced = (c: string) => products.filter((p) => p.prices[c] !== undefined).length;
    for (const c of CATALOG_CURRENCIES) expect(priced(c)).toBeGreaterThan(1000);
    expect(priced('USD')).toBe(10_000);
    expect(priced('CAD')).toBeLessThan(10_000);
  });

  it('prices with at most 2 decimals, above 0, and has scarce, normal and overstocked items', () => {
    for (const p of products) {
      for (const amount of Object.values(p.prices)) {
        expect(amount).toMatch(/^\d+\.\d{2}$/);
        expect(Number(amount)).toBeGreaterThan(0);
      }
    }
    const inv = products.map((p) => p.inventoryLevel);
    expect(inv.some((n) => n < 10)).toBe(true);
    expect(inv.some((n) => n >= 10 && n <= 500)).toBe(true);
    expect(inv.some((n) => n > 500)).toBe(true);
  });

  it('is the same catalog every time (all processes agree), starting with the fixture SKUs', () => {
    expect(generateCatalog(300)).toEqual(generateCatalog(300));
    expect(products[0]).toMatchObject({ sku: 'SKU-ABC-000001', prices: { USD: '19.99' } });
  });

  it('streams the same products, in the same order, as it lists them (the seed of a large catalog)', () => {
    expect([...streamProducts(3_000, 7)]).toEqual(generateProducts(3_000, 7));
  });

  it('gives every product its own title, a product line after the brand when brand, adjective and type repeat', () => {
    const titles = generateProducts(10_000).map((p) => p.title);
    expect(new Set(titles).size).toBe(titles.length);
    const byId = new Map(generateProducts(10_000).map((p) => [p.productId, p.title]));
    expect(byId.get('prod_ofc_000007')).toBe('Oakhurst Ergonomic Mesh Office Chair');
    expect(byId.get('prod_ofc_000009')).toBe('Oakhurst Aria Ergonomic Mesh Office Chair');
  });

  it('names its product lines with words no category uses, so shop words find what they found', () => {
    const words = new Set(JSON.stringify(VOCABULARY).match(/[A-Za-z]+/g));
    for (const series of SERIES) expect(words).not.toContain(series);
  });
});

type Open = () => Promise<{ db: Db; drop(): Promise<void> }>;
const pglite: Open = async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} });
const postgres: Open = async () => {
  const pg = await freshPostgres('catalog');
  return { db: await openPostgres(pg.url, 2), drop: pg.drop };
};
const sql = async (db: Db) => createSqlCatalog(db);
const mirrored = async (db: Db) => createMirroredCatalog(db, createSqlCatalog(db));

const stores: [string, Open, (db: Db) => Promise<Catalog>][] = [
  ['embedded store (PGlite), SQL', pglite, sql],
  ['embedded store (PGlite), mirrored in memory', pglite, mirrored],
  ['PostgreSQL', postgres, sql],
];

describe.each(stores)('Catalog contract: %s', (_name, open, make) => {
  let db: Db;
  let drop: () => Promise<void>;
  let catalog: Catalog;
  let queries = 0;
  let seeded = 0;
  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrateCatalog(db);
    seeded = await seedCatalog(db, 400);
    catalog = countingCatalog(await make(db), () => queries++);
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('seeds an empty catalog once; a second seed (another process starting) adds nothing', async () => {
    expect(seeded).toBe(400);
    expect(await seedCatalog(db, 400)).toBe(0);
    expect(await catalog.count()).toBe(400);
  });

  it('seeds with its indexes set aside and built again as the migrations made them', async () => {
    const fresh = await open();
    try {
      await migrateCatalog(fresh.db);
      const indexes = (q: Db) =>
        q.query<{ name: string; def: string }>(
          `SELECT c.relname AS name, regexp_replace(pg_get_indexdef(c.oid), ' ON \\S+\\.', ' ON ') AS def
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid::regclass::text ~ 'catalog_(product_groups|products|base_prices|search_words)$'
            ORDER BY 1`,
        );
      const before = await indexes(fresh.db);
      expect(before.map((i) => i.name)).toContain('catalog_product_groups_search');
      expect(await seedCatalog(fresh.db, 50)).toBe(50);
      expect(await indexes(fresh.db)).toEqual(before);
    } finally {
      await fresh.db.close();
      await fresh.drop();
    }
  });

  it('reads base prices for sku + currency in one query, telling unknown SKU from unknown currency', async () => {
    const expected = generateCatalog(400)[7];
    const before = queries;
    const got = await catalog.basePrices([
      { sku: 'SKU-ABC-000001', currency: 'USD' },
      { sku: 'SKU-ABC-000001', currency: 'JPY' },
      { sku: 'SKU-ZZZ-999999', currency: 'USD' },
      { sku: expected?.sku ?? '', currency: 'EUR' },
    ]);
    expect(queries).toBe(before + 1);
    expect(String(got[0])).toBe('19.99');
    expect(got[1]).toBeInstanceOf(NoBasePrice);
    expect(got[2]).toBeInstanceOf(UnknownSku);
    expect(String(got[3])).toBe(String(money(expected?.prices.EUR ?? '0')));
  });

  it('answers a single lookup the same way', async () => {
    expect(String((await catalog.basePrices([{ sku: 'SKU-ABC-000002', currency: 'USD' }]))[0])).toBe('5');
    expect((await catalog.basePrices([{ sku: 'SKU-ABC-000002', currency: 'GBP' }]))[0]).toBeInstanceOf(
      NoBasePrice,
    );
    expect((await catalog.basePrices([{ sku: 'SKU-QQQ-000002', currency: 'USD' }]))[0]).toBeInstanceOf(
      UnknownSku,
    );
  });

  it('returns products and their prices in the order asked, undefined or empty for unknown SKUs', async () => {
    const products = await catalog.products(['SKU-ABC-000002', 'SKU-ZZZ-000000', 'SKU-ABC-000001']);
    expect(products.map((p) => p?.name)).toEqual(['Gadget', undefined, 'Widget']);
    expect(products[0]).toEqual({
      sku: 'SKU-ABC-000002',
      name: 'Gadget',
      category: 'toys',
      inventoryLevel: 5,
    });
    const prices = await catalog.pricesOf(['SKU-ZZZ-000000', 'SKU-ABC-000001']);
    expect(prices[0]).toEqual([]);
    expect(prices[1]?.map((p) => `${p.currency} ${p.amount.toFixed(2)}`)).toEqual([
      'EUR 18.49',
      'GBP 15.99',
      'USD 19.99',
    ]);
  });

  it('changes a base price, reporting the previous one, and adds a currency', async () => {
    const change = await catalog.setBasePrice('SKU-ABC-000001', 'USD', money('21.50'));
    expect(change.previousAmount?.toFixed(2)).toBe('19.99');
    expect(String((await catalog.basePrices([{ sku: 'SKU-ABC-000001', currency: 'USD' }]))[0])).toBe('21.5');
    const added = await catalog.setBasePrice('SKU-ABC-000001', 'JPY', money('3100'));
    expect(added.previousAmount).toBeUndefined();
    expect(String((await catalog.basePrices([{ sku: 'SKU-ABC-000001', currency: 'JPY' }]))[0])).toBe('3100');
  });

  it('refuses to price an unknown SKU', async () => {
    await expect(catalog.setBasePrice('SKU-ZZZ-000001', 'USD', money(1))).rejects.toBeInstanceOf(UnknownSku);
  });
});
