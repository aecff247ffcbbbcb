/**
 * A broad search (search/degrade.ts): past COUNT_CAP matches the count is a lower bound, said so,
 * and only the freshest matches (updated_at) are ranked; at most COUNT_CAP matches, exactly as
 * before.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import {
  COUNT_CAP,
  EXACT_UP_TO,
  MIN_RANKED,
  widening,
} from '../../subgraphs/pricing/catalog/search/degrade.ts';
import { type SearchInput, searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { type CatalogSearch, createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

/** The freshest products: more than COUNT_CAP, so the threshold lies among them. */
const FRESH = COUNT_CAP + 100;

describe.each(catalogStores('broad'))('a broad search: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let search: CatalogSearch;
  let products: number;
  let trigram: string;
  const ids = async (sql: string) => (await db.query<{ id: string }>(sql)).map((r) => r.id);

  beforeAll(async () => {
    ({ db, drop } = await open());
    const schema = await migrateCatalog(db);
    await seedCatalog(db, 3000);
    products = Number(
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_product_groups'))[0]?.n,
    );
    // The products with the highest ids changed last: the exact browse (by id) starts elsewhere.
    await db.query(
      `UPDATE catalog_product_groups SET updated_at = now() + interval '1 day'
        WHERE product_id IN (SELECT product_id FROM catalog_product_groups ORDER BY product_id DESC LIMIT ${FRESH})`,
    );
    trigram = schema.trigram;
    // Searched as a catalog too large to search exactly (EXACT_UP_TO) would be.
    search = createSqlCatalogSearch(db, { trigram, secret: 'broad', exactUpTo: 0 });
  }, 120_000);
  afterAll(async () => drop());

  const browse: SearchInput = { filters: { available: true }, limit: 10, facets: true };

  it('counts up to the cap, says the count is a lower bound, and ranks only the freshest matches', async () => {
    const all = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM catalog_product_groups g WHERE EXISTS (SELECT 1 FROM catalog_products v
         WHERE v.product_id = g.product_id AND coalesce(v.availability, CASE WHEN v.inventory_level <= 0 THEN 'out_of_stock' ELSE 'in_stock' END)
               IN ('in_stock', 'limited_stock', 'backorder', 'preorder'))`,
    );
    expect(Number(all[0]?.n)).toBeGreaterThan(COUNT_CAP);
    const page = await search.search(searchRequest(browse));
    expect(page.totalCapped).toBe(true);
    expect(page.total).toBe(COUNT_CAP);
    // A browse ranks its matches alike, then by id: the first ids among the freshest.
    const freshest = await ids(
      `SELECT product_id AS id FROM (SELECT product_id FROM catalog_product_groups ORDER BY product_id DESC LIMIT ${FRESH}) f
        ORDER BY product_id`,
    );
    const shown = page.products.map((p) => p.productId);
    expect(shown).toHaveLength(10);
    for (const id of shown) expect(freshest).toContain(id);
    const exactFirst = await ids(
      'SELECT product_id AS id FROM catalog_product_groups ORDER BY product_id LIMIT 10',
    );
    expect(shown).not.toEqual(exactFirst);
    // The facets count the ranked matches, not every match.
    const a = page.facets?.availability;
    expect((a?.available ?? 0) + (a?.unavailable ?? 0)).toBeLessThanOrEqual(FRESH);
    expect(products).toBeGreaterThan(FRESH);
  });

  it('continues the same freshest matches on the next page, still a lower bound', async () => {
    const first = await search.search(searchRequest(browse));
    const next = await search.search(searchRequest({ ...browse, cursor: first.nextCursor }));
    expect(next.totalCapped).toBe(true);
    const freshest = new Set(
      await ids(
        `SELECT product_id AS id FROM catalog_product_groups ORDER BY product_id DESC LIMIT ${FRESH}`,
      ),
    );
    for (const p of next.products) expect(freshest.has(p.productId)).toBe(true);
    expect((next.products[0]?.productId ?? '') > (first.products.at(-1)?.productId ?? '')).toBe(true);
  });

  it('answers a broad search seen before in one statement, the same page', async () => {
    let statements = 0;
    const counting = {
      ...db,
      query: (sql: string, params?: unknown[]) => {
        statements++;
        return db.query(sql, params as never);
      },
    } as Db;
    const again = createSqlCatalogSearch(counting, { trigram, secret: 'broad', exactUpTo: 0 });
    const first = await again.search(searchRequest(browse));
    const before = statements;
    const second = await again.search(searchRequest(browse));
    expect(statements - before).toBe(2); // the page, and the facets asked for
    expect(second.products.map((p) => p.productId)).toEqual(first.products.map((p) => p.productId));
    expect(second.totalCapped).toBe(true);
  });

  it('counts and ranks exactly at or below the cap', async () => {
    const narrow: SearchInput = { filters: { categories: ['office'] }, limit: 10 };
    const exact = await ids(
      `SELECT product_id AS id FROM catalog_product_groups WHERE category_paths && '{office}' ORDER BY product_id`,
    );
    expect(exact.length).toBeLessThanOrEqual(COUNT_CAP);
    expect(exact.length).toBeGreaterThan(10);
    const page = await search.search(searchRequest(narrow));
    expect(page.totalCapped).toBeUndefined();
    expect(page.total).toBe(exact.length);
    expect(page.products.map((p) => p.productId)).toEqual(exact.slice(0, 10));
  });

  it('searches a catalog within EXACT_UP_TO exactly: every match counted and every page reachable', async () => {
    const exact = createSqlCatalogSearch(db, { trigram, secret: 'broad' });
    expect(products).toBeLessThanOrEqual(EXACT_UP_TO);
    const all = await ids(
      `SELECT g.product_id AS id FROM catalog_product_groups g WHERE EXISTS (SELECT 1 FROM catalog_products v
         WHERE v.product_id = g.product_id AND coalesce(v.availability, CASE WHEN v.inventory_level <= 0 THEN 'out_of_stock' ELSE 'in_stock' END)
               IN ('in_stock', 'limited_stock', 'backorder', 'preorder'))
        ORDER BY g.product_id`,
    );
    expect(all.length).toBeGreaterThan(COUNT_CAP);
    const first = await exact.search(searchRequest({ ...browse, limit: 100 }));
    expect(first.totalCapped).toBeUndefined();
    expect(first.total).toBe(all.length);
    const a = first.facets?.availability;
    expect((a?.available ?? 0) + (a?.unavailable ?? 0)).toBe(all.length);
    // Page to the end: every available product once, in id order (a browse ranks them alike).
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await exact.search(
        searchRequest({ filters: browse.filters, limit: 100, ...(cursor ? { cursor } : {}) }),
      );
      seen.push(...page.products.map((p) => p.productId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });
});

describe('how far a broad search widens its slice (degrade.ts, widening)', () => {
  it.each([
    [0, 8], // nothing fresh matched: the share is unknown, the widest step
    [1, 8],
    [3, 8],
    [4, 8],
    [5, 8],
    [8, 4],
    [14, 4],
    [15, 2],
    [19, 2],
  ])('%i fresh matches widen the slice %i times', (found, times) => {
    expect(widening(found)).toBe(times);
  });

  it('is a power of two from 2 to 8, the least that should find a margin over MIN_RANKED', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MIN_RANKED - 1 }), (found) => {
        const times = widening(found);
        expect([2, 4, 8]).toContain(times);
        // Enough at the same share (with a margin), or the widest step.
        expect(times === 8 || found * times > MIN_RANKED).toBe(true);
        // Not wider than needed: half of it would not have reached the aim, unless it is the least step.
        if (times > 2) expect(found * (times / 2)).toBeLessThan(1.5 * MIN_RANKED);
      }),
    );
  });
});
