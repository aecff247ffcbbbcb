/**
 * A remembered broad search's candidates (search/broad.ts): read once beside the first search,
 * then the search reads them by key. Its pages are the ones a search without them gives, what a
 * variant answers (availability, price) is checked on every search, and a catalog change
 * forgets them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { COUNT_CAP } from '../../subgraphs/pricing/catalog/search/degrade.ts';
import { type SearchInput, searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import {
  type CatalogSearch,
  createSqlCatalogSearch,
  type SearchPage,
} from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

const FRESH = COUNT_CAP + 100;

/** Broad in this catalog (more than COUNT_CAP match), each with a filter its variants answer. */
const BROAD: [string, SearchInput][] = [
  ['available', { filters: { available: true }, limit: 10 }],
  ['available, facets', { filters: { available: true }, limit: 5, facets: true }],
  ['priced in USD, variants', { filters: { available: true, pricedIn: 'USD' }, limit: 10, variants: true }],
];

const ids = (p: SearchPage) => p.products.map((x) => x.productId);
const shape = (p: SearchPage) => ({
  products: p.products.map((x) => [x.productId, x.variants.map((v) => v.sku)]),
  total: p.total,
  totalCapped: p.totalCapped,
  facets: p.facets,
});

describe.each(catalogStores('candidates'))('a remembered broad search: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let trigram: string;
  /** The statements a search sent, in order. */
  const sent: string[] = [];
  let counting: Db;

  beforeAll(async () => {
    ({ db, drop } = await open());
    trigram = (await migrateCatalog(db)).trigram;
    await seedCatalog(db, 3000);
    await db.query(
      `UPDATE catalog_product_groups SET updated_at = now() + interval '1 day'
        WHERE product_id IN (SELECT product_id FROM catalog_product_groups ORDER BY product_id DESC LIMIT ${FRESH})`,
    );
    counting = {
      ...db,
      query: (sql: string, params?: unknown[]) => {
        sent.push(sql);
        return db.query(sql, params as never);
      },
    } as Db;
  }, 120_000);
  afterAll(async () => drop());

  const fresh = () => createSqlCatalogSearch(db, { trigram, secret: 'candidates', exactUpTo: 0 });
  /** Searches until the search reads its candidates (they are read beside the first one). */
  const remembered = async (search: CatalogSearch, input: SearchInput) => {
    for (let i = 0; i < 50; i++) {
      sent.length = 0;
      const page = await search.search(searchRequest(input));
      if (sent.some((s) => s.includes('g.product_id = ANY('))) return page;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the candidates were never read');
  };

  it.each(BROAD)('%s: the page read by candidates is the page without them', async (_, input) => {
    const search = createSqlCatalogSearch(counting, { trigram, secret: 'candidates', exactUpTo: 0 });
    const first = await search.search(searchRequest(input));
    expect(first.totalCapped).toBe(true);
    const byCandidates = await remembered(search, input);
    // Neither the text nor the freshness index is read again: the candidates by key.
    expect(sent[0]).not.toMatch(/lpad\(/);
    expect(shape(byCandidates)).toEqual(shape(first));
    expect(shape(byCandidates)).toEqual(shape(await fresh().search(searchRequest(input))));
  });

  it('checks what a variant answers on every search: a product sold out since is not shown', async () => {
    const input = BROAD[0]?.[1] as SearchInput;
    const search = createSqlCatalogSearch(counting, { trigram, secret: 'candidates', exactUpTo: 0 });
    const before = await remembered(search, input);
    const [gone] = ids(before);
    const variants = await db.query<{ sku: string; inventory_level: number; availability: string | null }>(
      'SELECT sku, inventory_level, availability FROM catalog_products WHERE product_id = $1',
      [gone],
    );
    try {
      await db.query(
        `UPDATE catalog_products SET inventory_level = 0, availability = 'out_of_stock' WHERE product_id = $1`,
        [gone],
      );
      const after = await remembered(search, input);
      expect(ids(after)).not.toContain(gone);
      expect(shape(after)).toEqual(shape(await fresh().search(searchRequest(input))));
    } finally {
      for (const v of variants)
        await db.query('UPDATE catalog_products SET inventory_level = $2, availability = $3 WHERE sku = $1', [
          v.sku,
          v.inventory_level,
          v.availability,
        ]);
    }
  });

  it('gives cursors without the candidates, which continue the same matches', async () => {
    const input = BROAD[0]?.[1] as SearchInput;
    const search = createSqlCatalogSearch(counting, { trigram, secret: 'candidates', exactUpTo: 0 });
    await search.search(searchRequest(input));
    const page = await remembered(search, input);
    expect(page.nextCursor).toBeDefined();
    expect(page.nextCursor?.length ?? 0).toBeLessThan(512);
    const next = await search.search(searchRequest({ ...input, cursor: page.nextCursor }));
    const expected = await fresh().search(searchRequest({ ...input, cursor: page.nextCursor }));
    expect(ids(next)).toEqual(ids(expected));
    expect(ids(next)).not.toContain(ids(page)[0]);
  });

  it('forgets the candidates on a catalog change and reads its slice again', async () => {
    const input = BROAD[0]?.[1] as SearchInput;
    const search = createSqlCatalogSearch(counting, { trigram, secret: 'candidates', exactUpTo: 0 });
    await search.search(searchRequest(input));
    await remembered(search, input);
    search.catalogChanged();
    sent.length = 0;
    const again = await search.search(searchRequest(input));
    expect(sent[0]).not.toContain('g.product_id = ANY(');
    expect(again.totalCapped).toBe(true);
  });
});
