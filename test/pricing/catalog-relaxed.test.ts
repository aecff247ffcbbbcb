/**
 * A query that names an option value (search/option-words.ts): the products with the value come
 * first, and those of the rest of the words without it follow instead of vanishing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import type { CatalogProductInput } from '../../subgraphs/pricing/catalog/model.ts';
import { writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import {
  createOptionWords,
  OPTION_VALUES_REFRESH_MS,
  withoutValues,
} from '../../subgraphs/pricing/catalog/search/option-words.ts';
import { searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { type CatalogSearch, createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

describe('withoutValues: the query without the option values it names', () => {
  const values = new Set(['40', '41', 'black', '250 g', 'oak']);
  it.each([
    ['northfold running shoes 40', 'northfold running shoes'],
    ['green valley pasta 250 g', 'green valley pasta'],
    ['black office chair', 'office chair'],
    ['wall clock oak 41', 'wall clock'],
    ['t-shirt black', 't-shirt'],
    ['running shoes', undefined],
    ['black 40', undefined],
    ['pasta 250', undefined],
    ['"black chair" 40', undefined],
    ['-black chair', undefined],
    ['black or oak chair', undefined],
  ])('%s → %s', (query, expected) => {
    expect(withoutValues(query, values)).toBe(expected);
  });
});

describe('the option values read, and read again after a catalog change', () => {
  it('waits for the first read, then reads again beside the searches, at most once an interval', async () => {
    let reads = 0;
    let values = ['40'];
    let release: () => void = () => {};
    const db = {
      query: async () => {
        reads++;
        if (reads > 1) await new Promise<void>((r) => (release = r));
        return values.map((value) => ({ value }));
      },
    } as unknown as Db;
    let t = 0;
    const words = createOptionWords(db, () => t);
    expect(await words.relaxed('running shoes 40')).toBe('running shoes');
    values = ['40', '41'];
    words.forget();
    expect(await words.relaxed('running shoes 41')).toBeUndefined();
    expect(reads).toBe(1);
    t += OPTION_VALUES_REFRESH_MS;
    // Read again, not waited for: the values read before answer meanwhile.
    expect(await words.relaxed('running shoes 41')).toBeUndefined();
    expect(reads).toBe(2);
    release();
    await new Promise((r) => setImmediate(r));
    expect(await words.relaxed('running shoes 41')).toBe('running shoes');
    expect(reads).toBe(2);
  });
});

const shoe = (id: string, brand: string, sizes: string[], n: number): CatalogProductInput => ({
  productId: id,
  title: 'Running Shoes',
  brand,
  description: { plain: '' },
  categories: ['Apparel > Shoes'],
  condition: 'new',
  media: [],
  options: [{ name: 'Size', values: sizes }],
  tags: [],
  variants: sizes.map((size, i) => {
    const sku = `SKU-APP-${String(900000 + n * 10 + i)}`;
    return {
      sku,
      variantId: sku,
      title: `Running Shoes ${size}`,
      name: `Running Shoes ${size}`,
      category: 'apparel',
      inventoryLevel: 5,
      prices: { USD: '80.00' },
      options: [{ name: 'Size', value: size }],
      barcodes: [],
      media: [],
    };
  }),
});

const stores = catalogStores('relaxed');

describe.each(stores)('a query naming an option value: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let search: CatalogSearch;
  beforeAll(async () => {
    ({ db, drop } = await open());
    const schema = await migrateCatalog(db);
    const products = [
      shoe('nf-40', 'Northfold', ['39', '40'], 1),
      shoe('nf-42', 'Northfold', ['41', '42'], 2),
      shoe('nf-43', 'Northfold', ['43'], 3),
      shoe('other-40', 'Stride', ['40'], 4),
    ];
    await db.transaction((tx) => writeProducts(tx, products, 'feed'));
    search = createSqlCatalogSearch(db, {
      trigram: schema.trigram,
      secret: 'test-secret-of-thirty-two-chars!',
    });
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  const ids = async (query: string, limit = 10) =>
    (await search.search(searchRequest({ query, limit, variants: false }))).products.map((p) => p.productId);

  it('finds the products with the value first, then those of the brand and type without it', async () => {
    const found = await ids('northfold running shoes 40');
    expect(found[0]).toBe('nf-40');
    expect(found.slice(1).sort()).toEqual(['nf-42', 'nf-43']);
    // The query's other words must still all match: another brand's shoe in size 40 is not found.
    expect(found).not.toContain('other-40');
  });

  it('pages through them with cursors, every product once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search.search(
        searchRequest({
          query: 'northfold running shoes 40',
          limit: 1,
          variants: false,
          ...(cursor ? { cursor } : {}),
        }),
      );
      seen.push(...page.products.map((p) => p.productId));
      expect(page.total).toBe(3);
      cursor = page.nextCursor;
    } while (cursor && seen.length < 10);
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
    expect(seen[0]).toBe('nf-40');
  });

  it('leaves a query that names no value, or only values, as it was', async () => {
    expect((await ids('northfold running shoes')).sort()).toEqual(['nf-40', 'nf-42', 'nf-43']);
    expect((await ids('40')).sort()).toEqual(['nf-40', 'other-40']);
  });
});
