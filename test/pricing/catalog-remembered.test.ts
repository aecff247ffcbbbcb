/**
 * A remembered search's ranked matches (search/remembered.ts): read once beside the first search,
 * then the search reads them instead of matching and ranking again. Broad searches (past the
 * cap, in a catalog past EXACT_UP_TO) and exact ones of RANKED_FROM matches or more. Their pages,
 * counts and facets are the ones a search without memory gives, what a variant answers
 * (availability, price) is checked on every search, and a catalog change forgets them; when its
 * message is lost, they are read again once CATALOG_REMEMBER_MS old (the tests' ManualClock).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { COUNT_CAP } from '../../subgraphs/pricing/catalog/search/degrade.ts';
import { MAX_CANDIDATES, RANKED_FROM } from '../../subgraphs/pricing/catalog/search/remembered.ts';
import { type SearchInput, searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import {
  type CatalogSearch,
  createSqlCatalogSearch,
  type SearchPage,
} from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

const FRESH = COUNT_CAP + 100;

/** Broad in this catalog searched as a large one (more than COUNT_CAP match), each with a filter its variants answer. */
const BROAD: [string, SearchInput][] = [
  ['available', { filters: { available: true }, limit: 10 }],
  ['available, facets', { filters: { available: true }, limit: 5, facets: true }],
  ['priced in USD, variants', { filters: { available: true, pricedIn: 'USD' }, limit: 10, variants: true }],
];

/** Exact in this catalog (3,000 SKUs: 1,408 products), each matching RANKED_FROM to MAX_CANDIDATES products. */
const EXACT: [string, SearchInput][] = [
  ['a word', { query: 'warranty', limit: 10 }],
  ['a word, facets', { query: 'warranty', limit: 5, facets: true }],
  [
    'a word, available, priced in USD, variants',
    {
      query: 'warranty',
      filters: { available: true, pricedIn: 'USD' },
      limit: 10,
      variants: true,
    },
  ],
  [
    'a word under a price',
    { query: 'warranty', filters: { price: { currency: 'USD', min: 1000, max: 100000 } }, limit: 10 },
  ],
  ['two categories, available', { filters: { categories: ['books', 'toys'], available: true }, limit: 10 }],
];

const ids = (p: SearchPage) => p.products.map((x) => x.productId);
const shape = (p: SearchPage) => ({
  products: p.products.map((x) => [x.productId, x.variants.map((v) => v.sku)]),
  total: p.total,
  totalCapped: p.totalCapped,
  facets: p.facets,
});
/** The statement of a search that reads remembered ranked matches. */
const RANKED = /unnest\(\$\d+::text\[\], \$\d+::float8\[\]\)/;
/** The statement that reads a remembered search's ranked matches (beside a search). */
const READ = /^SELECT m\.product_id, m\.rank FROM/;
/** CATALOG_REMEMBER_MS in the tests of a bounded life. */
const LIFE = 30_000;

describe.each(catalogStores('remembered'))('a remembered search: %s', (_name, open) => {
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

  /** The search's options in these tests: this database's trigram schema, exact up to `exactUpTo`. */
  const optionsOf = (exactUpTo?: number) => ({
    trigram,
    secret: 'remembered',
    ...(exactUpTo !== undefined ? { exactUpTo } : {}),
  });
  const fresh = (exactUpTo?: number) => createSqlCatalogSearch(db, optionsOf(exactUpTo));
  /** Searches until `done` says the page is the one awaited (what is read beside a search lands later). */
  const until = async (search: CatalogSearch, input: SearchInput, done: (p: SearchPage) => boolean) => {
    for (let i = 0; i < 50; i++) {
      sent.length = 0;
      const page = await search.search(searchRequest(input));
      if (done(page)) return page;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the awaited page never came');
  };
  /** Searches until the search reads its ranked matches (they are read beside the first one). */
  const remembered = (search: CatalogSearch, input: SearchInput) =>
    until(search, input, () => sent.some((s) => RANKED.test(s)));

  it.each(BROAD)('broad, %s: the page read from memory is the page without it', async (_, input) => {
    const search = createSqlCatalogSearch(counting, optionsOf(0));
    const first = await search.search(searchRequest(input));
    expect(first.totalCapped).toBe(true);
    const byMemory = await remembered(search, input);
    // Neither the text nor the freshness index is read again, nor any product's row.
    expect(sent[0]).not.toMatch(/lpad\(/);
    expect(sent[0]).not.toMatch(/ts_rank/);
    expect(shape(byMemory)).toEqual(shape(first));
    expect(shape(byMemory)).toEqual(shape(await fresh(0).search(searchRequest(input))));
  });

  it.each(EXACT)('exact, %s: the page read from memory is the page without it', async (_, input) => {
    const search = createSqlCatalogSearch(counting, optionsOf());
    const first = await search.search(searchRequest(input));
    expect(first.totalCapped).toBeUndefined();
    expect(first.total).toBeGreaterThanOrEqual(RANKED_FROM);
    expect(first.total).toBeLessThanOrEqual(MAX_CANDIDATES);
    const byMemory = await remembered(search, input);
    expect(sent[0]).not.toMatch(/ts_rank|search @@/);
    expect(shape(byMemory)).toEqual(shape(first));
    expect(shape(byMemory)).toEqual(shape(await fresh().search(searchRequest(input))));
  });

  it('remembers no exact search of fewer than RANKED_FROM matches', async () => {
    const input: SearchInput = { query: 'black', limit: 10 };
    const search = createSqlCatalogSearch(counting, optionsOf());
    const first = await search.search(searchRequest(input));
    expect(first.total).toBeGreaterThan(0);
    expect(first.total).toBeLessThan(RANKED_FROM);
    await new Promise((r) => setTimeout(r, 50));
    sent.length = 0;
    await search.search(searchRequest(input));
    expect(sent.some((s) => RANKED.test(s))).toBe(false);
  });

  it.each([
    ['broad', BROAD[0]?.[1] as SearchInput, 0],
    ['exact', EXACT[2]?.[1] as SearchInput, undefined],
  ] as const)(
    '%s: checks what a variant answers on every search: a product sold out since is not shown',
    async (_, input, exactUpTo) => {
      const search = createSqlCatalogSearch(counting, optionsOf(exactUpTo));
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
        expect(shape(after)).toEqual(shape(await fresh(exactUpTo).search(searchRequest(input))));
      } finally {
        for (const v of variants)
          await db.query(
            'UPDATE catalog_products SET inventory_level = $2, availability = $3 WHERE sku = $1',
            [v.sku, v.inventory_level, v.availability],
          );
      }
    },
  );

  it.each([
    ['broad', BROAD[0]?.[1] as SearchInput, 0],
    ['exact', EXACT[0]?.[1] as SearchInput, undefined],
  ] as const)(
    '%s: gives cursors without the ranked matches, which continue the same matches',
    async (_, input, exactUpTo) => {
      const options = optionsOf(exactUpTo);
      const search = createSqlCatalogSearch(counting, options);
      await search.search(searchRequest(input));
      const page = await remembered(search, input);
      expect(page.nextCursor).toBeDefined();
      expect(page.nextCursor?.length ?? 0).toBeLessThan(512);
      const next = await search.search(searchRequest({ ...input, cursor: page.nextCursor }));
      const expected = await createSqlCatalogSearch(db, options).search(
        searchRequest({ ...input, cursor: page.nextCursor }),
      );
      expect(ids(next)).toEqual(ids(expected));
      expect(ids(next)).not.toContain(ids(page)[0]);
    },
  );

  it.each([
    ['broad', BROAD[0]?.[1] as SearchInput, 0],
    ['exact', EXACT[0]?.[1] as SearchInput, undefined],
  ] as const)(
    '%s: forgets the ranked matches on a catalog change and matches again',
    async (_, input, exactUpTo) => {
      const search = createSqlCatalogSearch(counting, optionsOf(exactUpTo));
      await search.search(searchRequest(input));
      await remembered(search, input);
      search.catalogChanged();
      sent.length = 0;
      await search.search(searchRequest(input));
      expect(sent.some((s) => RANKED.test(s))).toBe(false);
    },
  );

  /**
   * A change the search hears nothing of (its CatalogChanged message lost): exact, a product that
   * did not match "warranty" gets it in its title (first of the page without memory); broad, the
   * first available product by id is written now (the freshest, first of the slice's page).
   */
  const unheard: Record<'broad' | 'exact', () => Promise<{ changed: string; undo: () => Promise<unknown> }>> =
    {
      async exact() {
        const [row] = await db.query<{ product_id: string; title: string }>(
          `SELECT product_id, title FROM catalog_product_groups
          WHERE NOT search @@ websearch_to_tsquery('english', 'warranty') ORDER BY product_id LIMIT 1`,
        );
        const { product_id: changed, title } = row as { product_id: string; title: string };
        await db.query(
          `UPDATE catalog_product_groups SET title = 'Warranty ' || title WHERE product_id = $1`,
          [changed],
        );
        const undo = () =>
          db.query('UPDATE catalog_product_groups SET title = $2 WHERE product_id = $1', [changed, title]);
        return { changed, undo };
      },
      async broad() {
        const [changed] = ids(await fresh().search(searchRequest(BROAD[0]?.[1] as SearchInput)));
        const [row] = await db.query<{ updated_at: string }>(
          'SELECT updated_at::text FROM catalog_product_groups WHERE product_id = $1',
          [changed],
        );
        await db.query(
          `UPDATE catalog_product_groups SET updated_at = now() + interval '2 days' WHERE product_id = $1`,
          [changed],
        );
        const undo = () =>
          db.query('UPDATE catalog_product_groups SET updated_at = $2::timestamptz WHERE product_id = $1', [
            changed,
            row?.updated_at,
          ]);
        return { changed: changed as string, undo };
      },
    };

  it.each([
    ['broad', BROAD[0]?.[1] as SearchInput, 0],
    ['exact', EXACT[0]?.[1] as SearchInput, undefined],
  ] as const)(
    '%s: reads its ranked matches again once CATALOG_REMEMBER_MS old, so a lost catalog change is seen',
    async (kind, input, exactUpTo) => {
      const clock = new ManualClock();
      const options = optionsOf(exactUpTo);
      const search = createSqlCatalogSearch(counting, { ...options, rememberMs: LIFE, clock });
      await search.search(searchRequest(input));
      await remembered(search, input);
      const { changed, undo } = await unheard[kind]();
      try {
        const without = await createSqlCatalogSearch(db, options).search(searchRequest(input));
        expect(ids(without)[0]).toBe(changed);
        // Within its life: the matches as read, and not read again.
        clock.advance(LIFE - 1);
        sent.length = 0;
        expect(ids(await search.search(searchRequest(input)))).not.toContain(changed);
        expect(sent.some((s) => READ.test(s))).toBe(false);
        // Past it: this search is answered from them still, and they are read again beside it.
        clock.advance(1);
        sent.length = 0;
        expect(ids(await search.search(searchRequest(input)))).not.toContain(changed);
        const after = await until(search, input, (p) => ids(p)[0] === changed);
        expect(sent.some((s) => RANKED.test(s))).toBe(true);
        if (kind === 'exact') expect(shape(after)).toEqual(shape(without));
      } finally {
        await undo();
      }
    },
  );

  it('pauses the reads of matches after one failed, instead of sending one beside every search', async () => {
    const clock = new ManualClock();
    const input = EXACT[0]?.[1] as SearchInput;
    let failing = false;
    let failed = 0;
    const flaky = {
      ...counting,
      query: (sql: string, params?: unknown[]) => {
        if (failing && READ.test(sql)) {
          sent.push(sql);
          failed++;
          return Promise.reject(new Error('the store is down'));
        }
        return counting.query(sql, params as never);
      },
    } as Db;
    const search = createSqlCatalogSearch(flaky, { ...optionsOf(), rememberMs: LIFE, clock });
    await search.search(searchRequest(input));
    await remembered(search, input);
    clock.advance(LIFE);
    failing = true;
    sent.length = 0;
    const answered = ids(await search.search(searchRequest(input)));
    for (let i = 0; i < 300 && failed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(failed).toBe(1);
    // Searches go on, answered from the old matches, and send no read while the pause lasts.
    for (let i = 0; i < 5; i++) expect(ids(await search.search(searchRequest(input)))).toEqual(answered);
    expect(sent.filter((s) => READ.test(s))).toHaveLength(1);
    // A search remembered during the pause is not read then; it is read at its first search
    // after the pause (the first pause is under 2 s), not a whole life later.
    const other = EXACT[4]?.[1] as SearchInput;
    sent.length = 0;
    await search.search(searchRequest(other));
    await new Promise((r) => setTimeout(r, 50));
    expect(sent.filter((s) => READ.test(s))).toHaveLength(0);
    failing = false;
    clock.advance(5_000);
    sent.length = 0;
    await search.search(searchRequest(other));
    for (let i = 0; i < 300 && !sent.some((s) => READ.test(s)); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(sent.filter((s) => READ.test(s))).toHaveLength(1);
    // And the first search's old matches, past their life, are read again at its next search.
    clock.advance(LIFE - 5_001);
    sent.length = 0;
    await search.search(searchRequest(input));
    for (let i = 0; i < 300 && !sent.some((s) => READ.test(s)); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(sent.filter((s) => READ.test(s))).toHaveLength(1);
    expect(failed).toBe(1);
  });

  it('forgets a search not asked for in twice CATALOG_REMEMBER_MS: it is matched again', async () => {
    const clock = new ManualClock();
    const input = EXACT[0]?.[1] as SearchInput;
    const search = createSqlCatalogSearch(counting, { ...optionsOf(), rememberMs: LIFE, clock });
    await search.search(searchRequest(input));
    await remembered(search, input);
    clock.advance(2 * LIFE);
    sent.length = 0;
    await search.search(searchRequest(input));
    expect(sent[0]).toMatch(/ts_rank/);
    expect(sent.some((s) => RANKED.test(s))).toBe(false);
  });
});
