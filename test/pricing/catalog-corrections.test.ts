/**
 * Misspelt words (subgraphs/pricing/catalog/search/corrections.ts): each word's correction is
 * looked up in the store once, then remembered, so that a misspelt query is one statement (the
 * words as typed, else the corrected ones); an import's change makes the search forget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../lib/db/index.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import type { CatalogProductInput } from '../../subgraphs/pricing/catalog/model.ts';
import { writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import {
  createCorrections,
  MAX_REMEMBERED_WORDS,
} from '../../subgraphs/pricing/catalog/search/corrections.ts';
import { searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { type CatalogSearch, createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { catalogStores } from './support/catalog-stores.ts';

const product = (id: string, title: string, sku: string, price = '50.00'): CatalogProductInput => ({
  productId: id,
  title,
  description: { plain: '' },
  categories: ['Apparel > Shoes'],
  condition: 'new',
  media: [],
  options: [],
  tags: [],
  variants: [
    {
      sku,
      variantId: sku,
      title,
      name: title,
      category: 'apparel',
      inventoryLevel: 5,
      prices: { USD: price },
      options: [],
      barcodes: [],
      media: [],
    },
  ],
});

const stores = catalogStores('corrections');

describe.each(stores)('corrections remembered by the catalog search: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let search: CatalogSearch;
  /** The statements the search sent, in order. */
  const sent: string[] = [];
  beforeAll(async () => {
    const opened = await open();
    const store = opened.db;
    drop = opened.drop;
    const schema = await migrateCatalog(store);
    await store.transaction((tx) =>
      writeProducts(
        tx,
        [
          product('sneaker', 'Canvas Sneakers', 'SKU-APP-900001'),
          product('boot', 'Leather Boots', 'SKU-APP-900002', '150.00'),
        ],
        'feed',
      ),
    );
    db = {
      ...store,
      query: (sql, params) => {
        sent.push(sql);
        return store.query(sql, params);
      },
    };
    search = createSqlCatalogSearch(db, {
      trigram: schema.trigram,
      secret: 'test-secret-of-thirty-two-chars!',
    });
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  const run = async (query: string, filters = {}) => {
    sent.length = 0;
    const page = await search.search(searchRequest({ query, filters, variants: false }));
    return {
      ids: page.products.map((p) => p.productId),
      corrected: page.correctedQuery,
      statements: sent.length,
    };
  };

  it('looks a misspelt word up once; the same query again is one statement with the same answer', async () => {
    const first = await run('canvas speakerx');
    // The catalog's option values (read once: option-words.ts), the words as typed, the words'
    // nearest catalog words, the corrected words.
    expect(first).toEqual({ ids: ['sneaker'], corrected: 'canvas sneakers', statements: 4 });
    expect(await run('canvas speakerx')).toEqual({ ...first, statements: 1 });
    // Another query with the word: from memory too.
    expect(await run('speakerx')).toEqual({ ids: ['sneaker'], corrected: 'sneakers', statements: 1 });
  });

  it('answers with the words as typed when they match, though a word of them has a correction', async () => {
    // Both words remembered ("boots" as a word the catalog has), then "or" lets the typed words
    // match the boots: one statement, the one that would have tried the correction too.
    await run('speakerx boots');
    expect(await run('speakerx or boots')).toMatchObject({ ids: ['boot'], statements: 1 });
    expect(sent[0]).toContain('WITH typed AS MATERIALIZED');
    expect((await run('speakerx or boots')).corrected).toBeUndefined();
  });

  it('keeps the filters on the corrected words, and falls back to titles alike when neither matches', async () => {
    const within = await run('speakerx', { price: { currency: 'USD', max: 1000 } });
    expect(within).toEqual({ ids: [], corrected: undefined, statements: 2 });
  });

  it('forgets on a catalog change: a nearer word the import brought wins', async () => {
    await db.transaction((tx) =>
      writeProducts(tx, [product('speaker', 'Bluetooth Speakers', 'SKU-APP-900003')], 'feed'),
    );
    // Not told yet: the remembered correction still answers.
    expect((await run('speakerx')).corrected).toBe('sneakers');
    search.catalogChanged();
    // The words as typed, the nearest words, the corrected words (the option values are read
    // again beside the searches, not sooner than 10 s after the last read: option-words.ts).
    expect(await run('speakerx')).toEqual({ ids: ['speaker'], corrected: 'speakers', statements: 3 });
  });
});

describe('corrections: memory bounds', () => {
  it(`remembers at most ${MAX_REMEMBERED_WORDS} words, the oldest forgotten first`, async () => {
    let asked = 0;
    const db = {
      query: async (_sql: string, params: unknown[]) => {
        asked++;
        return (params[0] as string[]).map((word) => ({ word, known: false, near: null }));
      },
    } as unknown as Db;
    const corrections = createCorrections(db);
    const words = Array.from({ length: MAX_REMEMBERED_WORDS + 1 }, (_, i) => `w${i.toString(36)}zzz`);
    for (let i = 0; i < words.length; i += 100)
      await corrections.corrected(words.slice(i, i + 100).join(' '));
    expect(corrections.known(words[0] as string)).toBeUndefined();
    expect(corrections.known(words[1] as string)).toEqual({});
    expect(corrections.known(words.at(-1) as string)).toEqual({});
    const before = asked;
    await corrections.corrected(words[1] as string);
    expect(asked).toBe(before);
    corrections.forget();
    expect(corrections.known(words[1] as string)).toBeUndefined();
  });
});
