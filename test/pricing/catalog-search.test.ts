/**
 * Catalog search (subgraphs/pricing/catalog/search): the same contract on the embedded store
 * (PGlite) and PostgreSQL, over a small hand-made catalog whose every answer is known, then the
 * generated catalog for what a shopper types.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import type { CatalogProductInput, CatalogVariantInput } from '../../subgraphs/pricing/catalog/model.ts';
import { writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import {
  MAX_LIMIT,
  type SearchInput,
  SearchInputError,
  searchRequest,
} from '../../subgraphs/pricing/catalog/search/request.ts';
import { type CatalogSearch, createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

const variant = (sku: string, over: Partial<CatalogVariantInput> = {}): CatalogVariantInput => ({
  sku,
  variantId: sku,
  title: sku,
  name: sku,
  category: 'office',
  inventoryLevel: 50,
  prices: { USD: '100.00' },
  options: [],
  barcodes: [],
  media: [],
  ...over,
});

const product = (id: string, over: Partial<CatalogProductInput>): CatalogProductInput => ({
  productId: id,
  title: id,
  description: { plain: '' },
  categories: [],
  condition: 'new',
  media: [],
  options: [],
  tags: [],
  variants: [],
  ...over,
});

/** The hand-made catalog: each product there for one rule below. */
const CATALOG: CatalogProductInput[] = [
  product('chair-mesh', {
    title: 'Ergonomic Mesh Office Chair',
    brand: 'Ergoline',
    categories: ['Office > Chairs > Task Chairs'],
    description: { plain: 'Adjustable lumbar support and a breathable mesh back.' },
    options: [{ name: 'Color', values: ['Black', 'Grey'] }],
    variants: [
      variant('SKU-OFC-900001', {
        title: 'Black',
        options: [{ name: 'Color', value: 'Black' }],
        prices: { USD: '249.00', EUR: '229.00' },
      }),
      variant('SKU-OFC-900002', {
        title: 'Grey',
        options: [{ name: 'Color', value: 'Grey' }],
        prices: { USD: '279.00' },
        inventoryLevel: 0,
      }),
    ],
  }),
  product('chair-exec', {
    title: 'Executive Leather Chair',
    brand: 'Deskcraft',
    categories: ['Office > Chairs'],
    description: { plain: 'An ergonomic design with padded armrests.' },
    variants: [variant('SKU-OFC-900003', { prices: { USD: '459.00' } })],
  }),
  product('desk-standing', {
    title: 'Electric Standing Desk',
    brand: 'Deskcraft',
    categories: ['Office > Desks'],
    condition: 'refurbished',
    variants: [variant('SKU-OFC-900004', { prices: { USD: '399.00' }, availability: 'discontinued' })],
  }),
  product('drill', {
    title: 'Cordless Drill',
    brand: 'Ironside',
    categories: ['Tools > Power Tools'],
    options: [{ name: 'Voltage', values: ['12V', '18V'] }],
    variants: [
      variant('SKU-TOL-900005', {
        category: 'tools',
        title: '12V',
        options: [{ name: 'Voltage', value: '12V' }],
        prices: { USD: '89.00' },
      }),
      variant('SKU-TOL-900006', {
        category: 'tools',
        title: '18V',
        options: [{ name: 'Voltage', value: '18V' }],
        prices: { USD: '129.00' },
      }),
    ],
  }),
  product('coffee', {
    title: 'Organic Coffee Beans',
    brand: 'Sunfield',
    categories: ['Grocery > Coffee & Tea'],
    variants: [variant('SKU-GRC-900007', { category: 'grocery', prices: { USD: '12.49' } })],
  }),
  product('espresso', {
    title: 'Espresso Coffee Beans',
    brand: 'Sunfield',
    categories: ['Grocery > Coffee & Tea'],
    variants: [variant('SKU-GRC-900008', { category: 'grocery', prices: { USD: '14.99' } })],
  }),
];

const fixtures = (s: CatalogSearch) => ({
  ids: async (input: SearchInput) => (await s.search(searchRequest(input))).products.map((p) => p.productId),
});

const stores = catalogStores('search');

describe.each(stores)('catalog search: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let search: CatalogSearch;
  let ids: (input: SearchInput) => Promise<string[]>;
  beforeAll(async () => {
    ({ db, drop } = await open());
    const schema = await migrateCatalog(db);
    await db.transaction((tx) => writeProducts(tx, CATALOG, 'feed'));
    search = createSqlCatalogSearch(db, {
      trigram: schema.trigram,
      secret: 'test-secret-of-thirty-two-chars!',
    });
    ({ ids } = fixtures(search));
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('finds products by their words, a title match ranked above a description match', async () => {
    expect(await ids({ query: 'ergonomic chair' })).toEqual(['chair-mesh', 'chair-exec']);
    expect(await ids({ query: 'drills' })).toEqual(['drill']);
    expect(await ids({ query: 'ironside' })).toEqual(['drill']);
  });

  it('reads web search syntax: quoted phrases, or, and -word', async () => {
    expect(await ids({ query: '"coffee beans" -espresso' })).toEqual(['coffee']);
    expect(await ids({ query: 'drill or desk' })).toHaveLength(2);
  });

  it('corrects a misspelt word to the catalog word nearest to it, and says so', async () => {
    const page = await search.search(searchRequest({ query: 'ergnomic chiar' }));
    expect(page.correctedQuery).toBe('ergonomic chair');
    expect(page.products.map((p) => p.productId)).toEqual(['chair-mesh', 'chair-exec']);
    expect((await search.search(searchRequest({ query: 'ergonomic chair' }))).correctedQuery).toBeUndefined();
  });

  it("falls back to similar titles when no word of the query is the catalog's", async () => {
    expect(await ids({ query: 'Cordles Dril' })).toContain('drill');
    expect(await ids({ query: 'qqqzzzxxx' })).toEqual([]);
  });

  it('filters by a category and everything below it, case aside', async () => {
    expect((await ids({ filters: { categories: ['office'] } })).sort()).toEqual([
      'chair-exec',
      'chair-mesh',
      'desk-standing',
    ]);
    expect((await ids({ filters: { categories: ['Office > Chairs'] } })).sort()).toEqual([
      'chair-exec',
      'chair-mesh',
    ]);
    expect(await ids({ filters: { categories: ['OFFICE > CHAIRS > TASK CHAIRS'] } })).toEqual(['chair-mesh']);
    expect(await ids({ query: 'chair', filters: { categories: ['Tools'] } })).toEqual([]);
  });

  it('filters by brand, condition and availability', async () => {
    expect((await ids({ filters: { brands: ['DESKCRAFT'] } })).sort()).toEqual([
      'chair-exec',
      'desk-standing',
    ]);
    expect(await ids({ filters: { conditions: ['refurbished'] } })).toEqual(['desk-standing']);
    const available = await ids({ query: 'desk or chair', filters: { available: true } });
    expect(available.sort()).toEqual(['chair-exec', 'chair-mesh']);
  });

  it('filters by a price range in a currency, inclusive, in minor units, and keeps only the variants inside it', async () => {
    const page = await search.search(
      searchRequest({ query: 'chair', filters: { price: { currency: 'usd', min: 24900, max: 25000 } } }),
    );
    expect(page.products.map((p) => p.productId)).toEqual(['chair-mesh']);
    expect(page.products[0]?.variants.map((v) => v.sku)).toEqual(['SKU-OFC-900001']);
    // A product without a price in the currency does not match a price filter in it.
    expect(await ids({ query: 'chair', filters: { price: { currency: 'EUR', max: 100000 } } })).toEqual([
      'chair-mesh',
    ]);
  });

  it('keeps to variants priced in a currency when asked (what a shopper there can buy)', async () => {
    const page = await search.search(searchRequest({ query: 'chair', filters: { pricedIn: 'eur' } }));
    expect(page.products.map((p) => p.productId)).toEqual(['chair-mesh']);
    expect(page.products[0]?.variants.map((v) => v.sku)).toEqual(['SKU-OFC-900001']);
    // It narrows a search; alone it is none.
    expect(() => searchRequest({ filters: { pricedIn: 'EUR' } })).toThrow(SearchInputError);
  });

  it('filters by option values: any value of an option, and the variants that have it', async () => {
    const page = await search.search(
      searchRequest({ filters: { options: [{ name: 'voltage', values: ['18v', '24V'] }] } }),
    );
    expect(page.products.map((p) => p.productId)).toEqual(['drill']);
    expect(page.products[0]?.variants.map((v) => v.sku)).toEqual(['SKU-TOL-900006']);
  });

  it("shows a variant's availability from its stock or its stored state", async () => {
    const [mesh] = (await search.search(searchRequest({ query: 'mesh' }))).products;
    expect(mesh?.variants.map((v) => [v.sku, v.availability, v.available])).toEqual([
      ['SKU-OFC-900001', 'in_stock', true],
      ['SKU-OFC-900002', 'out_of_stock', false],
    ]);
    const [desk] = (await search.search(searchRequest({ query: 'desk' }))).products;
    expect(desk?.variants[0]).toMatchObject({ availability: 'discontinued', available: false });
  });

  it('leaves the variants out for a caller that shows none, the page otherwise the same', async () => {
    const input = { query: 'chair or drill', filters: { pricedIn: 'USD' }, limit: 2 };
    const full = await search.search(searchRequest(input));
    const bare = await search.search(searchRequest({ ...input, variants: false }));
    expect(bare.products.map((p) => p.variants)).toEqual([[], []]);
    expect(bare.products).toEqual(full.products.map((p) => ({ ...p, variants: [] })));
    expect({ ...bare, products: [] }).toEqual({ ...full, products: [] });
  });

  it('counts facets over every match, not the page', async () => {
    const page = await search.search(
      searchRequest({
        filters: { categories: ['office'], price: { currency: 'USD' as const, min: 0 } },
        limit: 1,
        facets: true,
      }),
    );
    expect(page.products).toHaveLength(1);
    expect(page.total).toBe(3);
    expect(page.facets?.brands).toEqual([
      { value: 'Deskcraft', count: 2 },
      { value: 'Ergoline', count: 1 },
    ]);
    expect(page.facets?.categories).toContainEqual({ value: 'office > chairs', count: 2 });
    expect(page.facets?.options).toEqual([
      {
        name: 'color',
        values: [
          { value: 'black', count: 1 },
          { value: 'grey', count: 1 },
        ],
      },
    ]);
    expect(page.facets?.conditions).toEqual([
      { value: 'new', count: 2 },
      { value: 'refurbished', count: 1 },
    ]);
    expect(page.facets?.availability).toEqual({ available: 2, unavailable: 1 });
    expect(page.facets?.prices.find((b) => b.min === 25000)).toEqual({ min: 25000, max: 49999, count: 2 });
  });

  it('pages with cursors that neither repeat nor skip a product, and totals every match', async () => {
    const seen: string[] = [];
    let page = await search.search(
      searchRequest({ filters: { categories: ['office', 'tools', 'grocery'] }, limit: 2 }),
    );
    seen.push(...page.products.map((p) => p.productId));
    expect(page.total).toBe(6);
    while (page.nextCursor) {
      page = await search.search(
        searchRequest({
          filters: { categories: ['office', 'tools', 'grocery'] },
          limit: 2,
          cursor: page.nextCursor,
        }),
      );
      seen.push(...page.products.map((p) => p.productId));
    }
    expect(seen.sort()).toEqual(CATALOG.map((p) => p.productId).sort());
  });

  it('refuses a cursor from another search, and a forged one, with a clear error', async () => {
    const first = await search.search(searchRequest({ query: 'chair', limit: 1 }));
    expect(first.nextCursor).toBeDefined();
    const other = searchRequest({ query: 'drill', limit: 1, cursor: first.nextCursor });
    await expect(search.search(other)).rejects.toBeInstanceOf(SearchInputError);
    const [body, mac] = (first.nextCursor as string).split('.');
    const forged = `${Buffer.from(JSON.stringify({ s: 'x', r: 0, p: 'zzz' })).toString('base64url')}.${mac}`;
    for (const cursor of [forged, `${body}.AAAA`, 'garbage', `${body}`])
      await expect(search.search(searchRequest({ query: 'chair', cursor }))).rejects.toBeInstanceOf(
        SearchInputError,
      );
  });

  it('takes any text as a query: never an error other than a refusal, never a failed statement', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 60 }),
          fc.stringMatching(/^[&|!():*<>'" a-z-]{0,40}$/),
          fc.constantFrom(
            '& | ! ( ) : * < > \' "',
            '\u0000chair',
            '"',
            '-',
            'or',
            '!!!',
            '(((',
            'chair:*',
            '\uD800',
          ),
        ),
        async (query) => {
          try {
            const page = await search.search(searchRequest({ query, filters: { categories: ['office'] } }));
            expect(page.products.length).toBeLessThanOrEqual(10);
          } catch (err) {
            expect(err).toBeInstanceOf(SearchInputError);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a search request', () => {
  const refused = (input: SearchInput) => {
    try {
      searchRequest(input);
    } catch (err) {
      if (err instanceof SearchInputError) return { pointer: err.pointer, kind: err.kind };
      throw err;
    }
    return undefined;
  };

  it.each<[string, SearchInput, { pointer: string; kind: string }]>([
    ['no query and no filter', {}, { pointer: '', kind: 'empty' }],
    ['an empty query and no filter', { query: '   ' }, { pointer: '', kind: 'empty' }],
    ['a query of 100 kB', { query: 'a'.repeat(100_000) }, { pointer: '/query', kind: 'too_large' }],
    ['a query of 300 characters', { query: 'chair '.repeat(50) }, { pointer: '/query', kind: 'too_large' }],
    ['a query that is not text', { query: 42 }, { pointer: '/query', kind: 'invalid' }],
    ['a limit of 0', { query: 'x', limit: 0 }, { pointer: '/limit', kind: 'invalid' }],
    ['a limit of 1.5', { query: 'x', limit: 1.5 }, { pointer: '/limit', kind: 'invalid' }],
    ['a limit as text', { query: 'x', limit: '10' }, { pointer: '/limit', kind: 'invalid' }],
    [
      'a price in exponent notation',
      { filters: { price: { currency: 'USD', max: 1e21 } } },
      { pointer: '/filters/price/max', kind: 'invalid' },
    ],
    [
      'a fractional price',
      { filters: { price: { currency: 'USD', max: 12.5 } } },
      { pointer: '/filters/price/max', kind: 'invalid' },
    ],
    [
      'a price with min above max',
      { filters: { price: { currency: 'USD', min: 2, max: 1 } } },
      { pointer: '/filters/price', kind: 'invalid' },
    ],
    [
      'a price in no currency',
      { filters: { price: { max: 100 } } },
      { pointer: '/filters/price/currency', kind: 'invalid' },
    ],
    [
      'a currency that is no code',
      { filters: { price: { currency: 'dollars', max: 1 } } },
      { pointer: '/filters/price/currency', kind: 'invalid' },
    ],
    [
      '51 categories',
      { filters: { categories: Array.from({ length: 51 }, (_, i) => `c${i}`) } },
      { pointer: '/filters/categories', kind: 'too_large' },
    ],
    [
      'a category that is no string',
      { filters: { categories: [7] } },
      { pointer: '/filters/categories/0', kind: 'invalid' },
    ],
    [
      'an option without values',
      { filters: { options: [{ name: 'Color', values: [] }] } },
      { pointer: '/filters/options/0', kind: 'invalid' },
    ],
    ['a cursor that is empty', { query: 'x', cursor: '' }, { pointer: '/cursor', kind: 'invalid' }],
  ])('refuses %s', (_what, input, expected) => {
    expect(refused(input)).toEqual(expected);
  });

  it('clamps a page size of 10^9 to the largest page, as UCP allows', () => {
    expect(searchRequest({ query: 'x', limit: 1e9 }).limit).toBe(MAX_LIMIT);
    expect(searchRequest({ query: 'x' }).limit).toBe(10);
  });

  it('strips NUL and other control characters, and normalises the rest', () => {
    expect(searchRequest({ query: '  ergo\u0000nomic\tchair\u200b ' }).query).toBe('ergo nomic chair');
    expect(searchRequest({ query: 'ｃｈａｉｒ' }).query).toBe('chair');
  });
});

describe('the generated catalog', () => {
  let db: Db;
  let search: CatalogSearch;
  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    const schema = await migrateCatalog(db);
    await seedCatalog(db, 2000);
    search = createSqlCatalogSearch(db, {
      trigram: schema.trigram,
      secret: 'test-secret-of-thirty-two-chars!',
    });
  });
  afterAll(() => db.close());

  it('finds "ergnomic chair" (sic) under 300 dollars: office chairs, the ergonomic ones first, each variant inside the price', async () => {
    const page = await search.search(
      searchRequest({ query: 'ergnomic chair', filters: { price: { currency: 'USD', max: 30000 } } }),
    );
    expect(page.correctedQuery).toBe('ergonomic chair');
    expect(page.products.length).toBeGreaterThan(2);
    expect(page.products[0]?.title).toMatch(/Ergonomic .*Chair/);
    for (const p of page.products) {
      expect(p.categories).toEqual(['Office > Chairs']);
      for (const v of p.variants) expect(Number(v.prices.USD)).toBeLessThanOrEqual(300);
    }
  });
});
