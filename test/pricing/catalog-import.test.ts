/**
 * A merchant's ACP product feed imported (subgraphs/pricing/catalog/import/): the same contract
 * on the embedded store and PostgreSQL. Lines judged alone and reported by number and JSONPath,
 * nothing of a refused line stored, a re-import changing nothing, full and partial imports, SKUs
 * assigned once and kept; the standard's own example product accepted.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import type { Db } from '../../lib/db/index.ts';
import { createLogger } from '../../lib/logger.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { MAX_LINE_BYTES } from '../../subgraphs/pricing/catalog/feed/line.ts';
import { ANALYSE_THRESHOLD, analyseIfChanged } from '../../subgraphs/pricing/catalog/import/analyse.ts';
import {
  CATALOG_GIN_INDEXES,
  settleBulkIndexing,
  startBulkIndexing,
} from '../../subgraphs/pricing/catalog/import/gin.ts';
import {
  type CatalogImport,
  type CatalogImports,
  createCatalogImports,
} from '../../subgraphs/pricing/catalog/import/service.ts';
import { assignSkus, type SkuNumbers } from '../../subgraphs/pricing/catalog/import/skus.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { createSqlCatalogProducts } from '../../subgraphs/pricing/catalog/products.ts';
import { writeProducts } from '../../subgraphs/pricing/catalog/products-write.ts';
import { searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { catalogStores } from './support/catalog-stores.ts';

const EXAMPLES = JSON.parse(
  readFileSync(new URL('../../schemas/acp/2026-04-17/examples/examples.feed.json', import.meta.url), 'utf8'),
) as { upsert_products_request_single_product: { products: Record<string, unknown>[] } };

const META = { id: 'feed_test', target_country: 'US' };

/** A feed product of `variants` variants, priced in USD cents. */
const product = (
  id: string,
  title: string,
  variants: { id: string; cents?: number; color?: string; status?: string }[],
  category = 'Office > Chairs',
) => ({
  id,
  title,
  description: { plain: `${title}, as the merchant describes it.` },
  url: `https://shop.example/products/${id}`,
  variants: variants.map((v) => ({
    id: v.id,
    title: `${title}${v.color ? ` - ${v.color}` : ''}`,
    ...(v.cents !== undefined ? { price: { amount: v.cents, currency: 'USD' } } : {}),
    availability: { available: v.status !== 'out_of_stock', status: v.status ?? 'in_stock' },
    categories: [{ value: category, taxonomy: 'merchant' }],
    ...(v.color ? { variant_options: [{ name: 'Color', value: v.color }] } : {}),
  })),
});

const line = (p: unknown) => JSON.stringify(p);

const stores = catalogStores('import', 3);

describe.each(stores)('catalog import: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let imports: CatalogImports;
  let products: ReturnType<typeof createSqlCatalogProducts>;
  const announced: { importId: string; changed: readonly string[]; removed: readonly string[] }[] = [];

  beforeAll(async () => {
    ({ db, drop } = await open());
    const schema = await migrateCatalog(db);
    await seedCatalog(db, 60);
    products = createSqlCatalogProducts(db, {
      trigram: schema.trigram,
      secret: 'a-test-secret-of-32-characters!!',
    });
    imports = createCatalogImports({
      db,
      clock: systemClock,
      log: createLogger(loadConfig({ LOG_LEVEL: 'silent' }), 'test'),
      changed: async (importId, changed, removed) => {
        announced.push({ importId, changed, removed });
      },
    });
  });
  afterAll(async () => {
    await imports.settled();
    await db.close();
    await drop();
  });

  /** Opens, appends in chunks of `chunk` lines, commits and waits for the commit. */
  async function importLines(mode: 'FULL' | 'PARTIAL', lines: string[], chunk = 2): Promise<CatalogImport> {
    const { id } = await imports.start({ mode, metadata: META });
    for (let i = 0; i < lines.length; i += chunk) await imports.append(id, i + 1, lines.slice(i, i + chunk));
    await imports.commit(id);
    await imports.settled();
    return (await imports.get(id, 1000)) as CatalogImport;
  }

  it("accepts the standard's own example product (examples.feed.json) and keeps its variant id beside a SKU", async () => {
    const example = EXAMPLES.upsert_products_request_single_product.products[0] as {
      id: string;
      variants: { id: string }[];
    };
    const done = await importLines('PARTIAL', [line(example)]);
    expect(done).toMatchObject({ status: 'DONE', accepted: 1, refused: 0, created: 1 });
    const found = await products.product(example.variants[0]?.id as string);
    expect(found?.product.productId).toBe(example.id);
    expect(found?.product.variants[0]?.variantId).toBe(example.variants[0]?.id);
    expect(found?.product.variants[0]?.sku).toMatch(/^SKU-[A-Z]{3}-\d{6}$/);
    // Out of stock in the example: not to be bought, and no stock counted.
    expect(found?.product.variants[0]).toMatchObject({
      available: false,
      availability: 'out_of_stock',
      inventoryLevel: 0,
    });
  });

  it('stages backslashes, escaped quotes, tabs and newlines as written (COPY text format on PostgreSQL)', async () => {
    // Each JSON escape arrives in the line as a backslash: COPY's text format reads an unescaped
    // backslash as its own escape, a tab as a column break and a newline as a row's end.
    const title = 'Desk "Pro" \\ 2\tdrawers\nwith\r\\N tray';
    const id = 'esc\tid\\N';
    const feedLine = line({
      ...product(id, title, [{ id: `${id}-v`, cents: 100 }]),
      url: 'https://shop.example/products/esc',
    });
    const done = await importLines('PARTIAL', [feedLine]);
    expect(done.errors).toEqual([]);
    expect(done).toMatchObject({ status: 'DONE', accepted: 1, created: 1 });
    const found = await products.product(`${id}-v`);
    expect(found?.product.productId).toBe(id);
    expect(found?.product.title).toBe(title);
  });

  it('stages the lines of one chunk apart: a record separator in a string, newlines between tokens', async () => {
    // PGlite takes a chunk's lines as one text cut at U+001E (stage.ts): strict JSON holds it
    // only escaped, and a line may spread over newlines between its tokens (a GraphQL append).
    const titles = ['Rack \u001e Shelf', 'Plain Shelf', 'Wide\u001e\u001eShelf'];
    const lines = [
      line(product('sep-1', titles[0] as string, [{ id: 'sep-1-v', cents: 100 }])),
      JSON.stringify(product('sep-2', titles[1] as string, [{ id: 'sep-2-v', cents: 200 }]), null, 2),
      line(product('sep-3', titles[2] as string, [{ id: 'sep-3-v', cents: 300 }])),
    ];
    expect(lines[0]).toContain('\\u001e');
    expect(lines[1]).toContain('\n');
    const done = await importLines('PARTIAL', lines, 3);
    expect(done.errors).toEqual([]);
    expect(done).toMatchObject({ status: 'DONE', accepted: 3, created: 3 });
    for (const [i, title] of titles.entries())
      expect((await products.product(`sep-${i + 1}-v`))?.product.title).toBe(title);
  });

  it('reports each refused line by its number, JSONPath and reason, and stores nothing of it', async () => {
    const good = product(
      'desk-1',
      'Oak Writing Desk',
      [{ id: 'desk-1-oak', cents: 24900 }],
      'Office > Desks',
    );
    const lines = [
      line(good),
      '{"id": "broken", "variants": [',
      line({ ...product('x1', 'X', [{ id: 'x1-a', cents: 100 }]), colour: 'red' }),
      line(product('x2', 'X', [{ id: 'x2-a', cents: 100 }])).replace('"amount":100', '"amount":1e2'),
      line(product('x3', 'X', [{ id: 'x3-a', cents: 100 }])).replace('"amount":100', '"amount":-1'),
      line(good),
      '',
      line({
        id: 'x4',
        variants: [
          { id: 'dup', title: 'a' },
          { id: 'dup', title: 'b' },
        ],
      }),
      JSON.stringify({ id: 'huge', title: 'x'.repeat(MAX_LINE_BYTES), variants: [] }),
      line(product('x5', 'X', [{ id: 'x5-a', cents: 100 }])).replace(
        '"currency":"USD"',
        '"currency":"dollars"',
      ),
      // U+0000, escaped (JSON allows it; PostgreSQL's text and jsonb do not): refused here, not
      // left to fail the commit.
      line(product('x6', 'X', [{ id: 'x6-a', cents: 100 }])).replace('"title":"X"', '"title":"X\\u0000"'),
      line({ ...product('x7', 'X', [{ id: 'x7-a', cents: 100 }]), description: { plain: 'a\u0000b' } }),
    ];
    const done = await importLines('PARTIAL', lines, 3);
    expect(done).toMatchObject({ status: 'DONE', linesRead: 12, accepted: 1, refused: 10 });
    expect(done.errors.map((e) => [e.line, e.path])).toEqual([
      [2, '$'],
      [3, '$.colour'],
      [4, '$.variants[0].price.amount'],
      [5, '$.variants[0].price.amount'],
      [6, '$.id'],
      [8, '$.variants[1].id'],
      [9, '$'],
      [10, '$.variants[0].price.currency'],
      [11, '$.title'],
      [12, '$.description.plain'],
    ]);
    expect(done.errors[2]?.reason).toMatch(/whole number of minor units/);
    expect(done.errors[4]?.reason).toMatch(/line 1/);
    expect(done.errors[9]?.reason).toMatch(/U\+0000/);
    for (const id of ['broken', 'x1', 'x2', 'x3', 'x4', 'huge', 'x5', 'x6', 'x7'])
      expect(await products.product(id)).toBeUndefined();
    expect((await products.product('desk-1'))?.product.variants[0]?.prices).toEqual({ USD: '249.00' });
  });

  it('changes nothing when the same file is imported again, and announces nothing', async () => {
    const lines = [
      line(
        product('chair-9', 'Mesh Task Chair', [
          { id: 'chair-9-black', cents: 19900, color: 'Black' },
          { id: 'chair-9-grey', cents: 19900, color: 'Grey' },
        ]),
      ),
    ];
    const first = await importLines('PARTIAL', lines);
    expect(first).toMatchObject({ created: 1, unchanged: 0 });
    const before = announced.length;
    const again = await importLines('PARTIAL', lines);
    expect(again).toMatchObject({ status: 'DONE', created: 0, updated: 0, unchanged: 1 });
    expect(announced.length).toBe(before);
    // A changed price is one update, announced with the product's SKUs.
    const cheaper = await importLines('PARTIAL', [
      lines[0]?.replace(/"amount":19900/g, '"amount":17900') as string,
    ]);
    expect(cheaper).toMatchObject({ updated: 1 });
    const sku = (await products.product('chair-9-black'))?.variantSku as string;
    expect(announced.at(-1)?.changed).toContain(sku);
    expect((await products.product('chair-9'))?.product.variants.map((v) => v.prices.USD)).toEqual([
      '179.00',
      '179.00',
    ]);
  });

  it('announces a product whose own title changed, though no variant or price did (searches must forget it)', async () => {
    const first = product('desk-3', 'Standing Desk', [{ id: 'desk-3-oak', cents: 49900 }]);
    await importLines('PARTIAL', [line(first)]);
    const before = announced.length;
    // The product's title is the group's (searched); the variant keeps its own title.
    const renamed = await importLines('PARTIAL', [line({ ...first, title: 'Height Adjustable Desk' })]);
    expect(renamed).toMatchObject({ status: 'DONE', updated: 1 });
    const sku = (await products.product('desk-3-oak'))?.variantSku as string;
    expect(announced.length).toBe(before + 1);
    expect(announced.at(-1)?.changed).toEqual([sku]);
  });

  it('a commit leaves the option values counted as the products hold them', async () => {
    await importLines('PARTIAL', [
      line(product('lamp-2', 'Desk Lamp', [{ id: 'lamp-2-plum', cents: 3900, color: 'Plum' }])),
    ]);
    // The product's only plum gone, teal come (option-values.ts; concurrent writers: catalog-option-values.test.ts).
    await importLines('PARTIAL', [
      line(product('lamp-2', 'Desk Lamp', [{ id: 'lamp-2-teal', cents: 3900, color: 'Teal' }])),
    ]);
    const held = await db.query<{ value: string; products: number }>(
      `SELECT v AS value, count(DISTINCT g.product_id)::int AS products
         FROM catalog_product_groups g, unnest(g.option_values) AS v GROUP BY v ORDER BY v`,
    );
    const kept = await db.query<{ value: string; products: number }>(
      'SELECT value, products FROM catalog_option_values ORDER BY value',
    );
    expect(held.map((r) => r.value)).toContain('teal');
    expect(held.map((r) => r.value)).not.toContain('plum');
    expect(kept).toEqual(held);
  });

  it('a variant moved to a new product keeps its SKU and loses the prices its new line does not give', async () => {
    const first = await importLines('PARTIAL', [
      line(
        product('move-1', 'Oak Desk', [
          { id: 'move-1-a', cents: 30000 },
          { id: 'move-1-b', cents: 32000 },
        ]),
      ),
    ]);
    expect(first).toMatchObject({ status: 'DONE', created: 1 });
    const sku = (await products.product('move-1-a'))?.variantSku as string;
    // move-1 drops variant a, which a new product (nothing of it stored) now sells in EUR only.
    const moved = product('move-2', 'Oak Desk, Large', [{ id: 'move-1-a', cents: 41000 }]);
    const eur = JSON.parse(line(moved).replace('"currency":"USD"', '"currency":"EUR"'));
    const second = await importLines('PARTIAL', [
      line(product('move-1', 'Oak Desk', [{ id: 'move-1-b', cents: 32000 }])),
      line(eur),
    ]);
    expect(second).toMatchObject({ status: 'DONE', created: 1, updated: 1 });
    expect((await products.product('move-1'))?.product.variants.map((v) => v.variantId)).toEqual([
      'move-1-b',
    ]);
    const now = await products.product('move-2');
    expect(now?.product.variants.map((v) => [v.sku, v.prices])).toEqual([[sku, { EUR: '410.00' }]]);
  });

  it('skips lines a retried chunk sends again, and refuses a gap', async () => {
    const { id } = await imports.start({ mode: 'PARTIAL', metadata: META });
    const lines = [1, 2, 3].map((n) =>
      line(product(`retry-${n}`, `Retry ${n}`, [{ id: `retry-${n}-a`, cents: 100 * n }])),
    );
    await imports.append(id, 1, lines.slice(0, 2));
    const after = await imports.append(id, 1, lines);
    expect(after).toMatchObject({ linesRead: 3, accepted: 3, refused: 0 });
    await expect(imports.append(id, 9, lines)).rejects.toThrow(/never sent/);
    await imports.cancel(id);
    expect((await imports.get(id))?.status).toBe('CANCELLED');
    expect(await products.product('retry-1')).toBeUndefined();
  });

  it('fails a file that is mostly not a feed, keeping nothing of it', async () => {
    const { id } = await imports.start({ mode: 'FULL', metadata: META });
    const garbage = Array.from({ length: 1200 }, (_, i) => `garbage ${i}`);
    const lines = [line(product('ok-1', 'OK', [{ id: 'ok-1-a', cents: 100 }])), ...garbage];
    for (let i = 0; i < lines.length; i += 500)
      await imports.append(id, i + 1, lines.slice(i, i + 500)).catch(() => {});
    const failed = (await imports.get(id)) as CatalogImport;
    expect(failed.status).toBe('FAILED');
    expect(failed.note).toMatch(/not an ACP product feed/);
    await expect(imports.commit(id)).rejects.toThrow(/FAILED/);
    expect(await products.product('ok-1')).toBeUndefined();
  });

  it('refuses metadata that is not FeedMetadata', async () => {
    await expect(imports.start({ mode: 'FULL', metadata: { target_country: 'US' } })).rejects.toThrow(
      /\$\.id/,
    );
    await expect(
      imports.start({ mode: 'FULL', metadata: { id: 'f', target_country: 'usa' } }),
    ).rejects.toThrow(/target_country/);
  });

  it('a full import with a refused line removes nothing, and says so', async () => {
    const seeded = (await products.search(searchRequest({ filters: { categories: ['Tools'] } }))).total;
    expect(seeded).toBeGreaterThan(0);
    const done = await importLines('FULL', [
      line(product('full-1', 'Full One', [{ id: 'full-1-a', cents: 500 }])),
      'not json',
    ]);
    expect(done).toMatchObject({ status: 'DONE', replaced: false, removed: 0 });
    expect(done.note).toMatch(/no product was removed/);
    expect((await products.search(searchRequest({ filters: { categories: ['Tools'] } }))).total).toBe(seeded);
  });

  it('a clean full import replaces the product set; a product published again gets its SKU back', async () => {
    const keep = line(product('full-1', 'Full One', [{ id: 'full-1-a', cents: 500 }]));
    const other = line(product('full-2', 'Full Two', [{ id: 'SKU-ZZT-000777', cents: 700 }]));
    const done = await importLines('FULL', [keep, other]);
    expect(done).toMatchObject({ status: 'DONE', replaced: true });
    expect(done.removed).toBeGreaterThan(10);
    expect((await products.search(searchRequest({ filters: { categories: ['Tools'] } }))).total).toBe(0);
    // A feed's own id that is already a free SKU is its SKU.
    expect((await products.product('SKU-ZZT-000777'))?.variantSku).toBe('SKU-ZZT-000777');
    const skuBefore = (await products.product('full-1-a'))?.variantSku;
    await importLines('FULL', [other]);
    expect(await products.product('full-1')).toBeUndefined();
    await importLines('PARTIAL', [keep]);
    expect((await products.product('full-1-a'))?.variantSku).toBe(skuBefore);
    expect(announced.some((a) => a.removed.length > 10)).toBe(true);
  });

  /** The catalog's GIN indexes whose pending list is on (`fastupdate = on`). */
  const gathering = async () =>
    (
      await db.query<{ relname: string }>(
        `SELECT relname FROM pg_class WHERE relname = ANY($1::text[]) AND 'fastupdate=on' = ANY(reloptions)`,
        [[...CATALOG_GIN_INDEXES]],
      )
    ).map((r) => r.relname);

  it('a commit leaves the GIN indexes as it found them (fastupdate off, the products it wrote found)', async () => {
    const done = await importLines('PARTIAL', [
      line(product('gin-1', 'Quokka Lamp', [{ id: 'gin-1-a', cents: 900, color: 'Teal' }], 'Garden > Lamps')),
    ]);
    expect(done).toMatchObject({ status: 'DONE', created: 1 });
    expect(await gathering()).toEqual([]);
    const found = await products.search(searchRequest({ query: 'quokka lamp' }));
    expect(found.products.map((p) => p.productId)).toEqual(['gin-1']);
    const byCategory = await products.search(searchRequest({ filters: { categories: ['Garden > Lamps'] } }));
    expect(byCategory.products.map((p) => p.productId)).toEqual(['gin-1']);
  });

  it('commits row by row when the indexes cannot be altered (a role that does not own them)', async () => {
    const query = db.query.bind(db);
    (db as { query: Db['query'] }).query = ((sql: string, params?: readonly unknown[]) =>
      sql.startsWith('ALTER INDEX')
        ? Promise.reject(new Error('must be owner of index'))
        : query(sql, params)) as Db['query'];
    try {
      const done = await importLines('PARTIAL', [
        line(product('gin-2', 'Wombat Rug', [{ id: 'gin-2-a', cents: 4900 }], 'Home > Rugs')),
      ]);
      expect(done).toMatchObject({ status: 'DONE', created: 1 });
    } finally {
      (db as { query: Db['query'] }).query = query;
    }
    expect(await gathering()).toEqual([]);
    const found = await products.search(searchRequest({ query: 'wombat rug' }));
    expect(found.products.map((p) => p.productId)).toEqual(['gin-2']);
  });

  it('a start settles the pending lists a commit stopped midway left on', async () => {
    await startBulkIndexing(db);
    expect((await gathering()).sort()).toEqual([...CATALOG_GIN_INDEXES].sort());
    await settleBulkIndexing(db);
    expect(await gathering()).toEqual([]);
  });

  it('refreshes the statistics only when the imports changed a share of the catalog that counts', async () => {
    const statements: string[] = [];
    const query = db.query.bind(db);
    (db as { query: Db['query'] }).query = ((sql: string, params?: readonly unknown[]) => {
      statements.push(sql);
      return query(sql, params);
    }) as Db['query'];
    // A refresh is two statements run at once (catalog.ts, analyseCatalog): count the products'.
    const analysed = () => statements.filter((s) => s.startsWith('ANALYZE catalog_product_groups')).length;
    try {
      await db.query('UPDATE catalog_imports SET analysed = true');
      const one = line(product('stats-1', 'Statistic Stool', [{ id: 'stats-1-a', cents: 1200 }]));
      expect(await importLines('PARTIAL', [one])).toMatchObject({ status: 'DONE', created: 1 });
      expect(await importLines('PARTIAL', [one])).toMatchObject({ status: 'DONE', unchanged: 1 });
      expect(analysed()).toBe(0);
      // The changes add up across imports: past the threshold, one ANALYZE counts them all.
      await db.query(
        `INSERT INTO catalog_imports (id, mode, status, metadata, created) VALUES ('imp_stats', 'PARTIAL', 'DONE', '{"id":"f"}', $1)`,
        [ANALYSE_THRESHOLD + 1000],
      );
      expect(await analyseIfChanged(db)).toBe(true);
      expect(analysed()).toBe(1);
      const [left] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM catalog_imports WHERE NOT analysed',
      );
      expect(Number(left?.n)).toBe(0);
      expect(await analyseIfChanged(db)).toBe(false);
      expect(analysed()).toBe(1);
    } finally {
      (db as { query: Db['query'] }).query = query;
    }
  });

  it('refreshes the statistics of an import that changed enough before it says DONE, and counts it once', async () => {
    const statements: string[] = [];
    const query = db.query.bind(db);
    (db as { query: Db['query'] }).query = ((sql: string, params?: readonly unknown[]) => {
      statements.push(sql);
      return query(sql, params);
    }) as Db['query'];
    try {
      await db.query('UPDATE catalog_imports SET analysed = true');
      const [r] = await db.query<{ rows: number }>(
        `SELECT (SELECT reltuples FROM pg_class WHERE oid = 'catalog_product_groups'::regclass)::float8 AS rows`,
      );
      const many = ANALYSE_THRESHOLD + Math.ceil(0.1 * Math.max(0, Number(r?.rows))) + 5;
      const lines = Array.from({ length: many }, (_, i) =>
        line(product(`bulk-${i}`, `Bulk Bench ${i}`, [{ id: `bulk-${i}-a`, cents: 1000 + i }])),
      );
      expect(await importLines('PARTIAL', lines, 50)).toMatchObject({ status: 'DONE', created: many });
      // Both of the refresh's statements (catalog.ts, analyseCatalog) end before DONE.
      const analyse = statements.findLastIndex((s) => s.startsWith('ANALYZE'));
      const done = statements.findIndex((s) => s.includes("SET status = 'DONE'"));
      expect(analyse).toBeGreaterThanOrEqual(0);
      expect(done).toBeGreaterThan(analyse);
      // Counted by that ANALYZE: the next small import does not add it again.
      const [left] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM catalog_imports WHERE NOT analysed',
      );
      expect(Number(left?.n)).toBe(0);
      const before = statements.filter((s) => s.startsWith('ANALYZE')).length;
      const one = line(product('bulk-x', 'Bulk Bench Extra', [{ id: 'bulk-x-a', cents: 999 }]));
      expect(await importLines('PARTIAL', [one])).toMatchObject({ status: 'DONE', created: 1 });
      expect(statements.filter((s) => s.startsWith('ANALYZE')).length).toBe(before);
    } finally {
      (db as { query: Db['query'] }).query = query;
    }
  });

  it('checks the foreign keys again once a batch is written without them', async () => {
    const rollback = new Error('rolled back on purpose');
    let orphan: unknown;
    await db
      .transaction(async (tx) => {
        await writeProducts(tx, [], 'feed');
        await writeProducts(
          tx,
          [
            {
              productId: 'fk-1',
              title: 'Checked Lamp',
              description: { plain: 'A lamp.' },
              categories: ['Home'],
              condition: 'new',
              media: [],
              options: [],
              tags: [],
              variants: [
                {
                  sku: 'SKU-FKC-000001',
                  variantId: 'fk-1-a',
                  title: 'Checked Lamp',
                  name: 'Checked Lamp',
                  category: 'home',
                  inventoryLevel: 3,
                  prices: { USD: '12.00' },
                  options: [],
                  barcodes: [],
                  media: [],
                },
              ],
            },
          ],
          'feed',
        );
        orphan = await tx
          .query(
            `INSERT INTO catalog_base_prices (sku, currency, amount) VALUES ('SKU-FKC-999999', 'USD', 1)`,
          )
          .then(
            () => 'stored',
            (err: Error) => err.message,
          );
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
    expect(orphan).toMatch(/foreign key/);
  });

  it("numbers a commit's new SKUs past one a variant brought as its own id in an earlier batch", async () => {
    const numbers: SkuNumbers = new Map();
    const got: string[] = [];
    const rollback = new Error('rolled back on purpose');
    await db
      .transaction(async (tx) => {
        for (const id of ['nq-1', 'SKU-QQQ-000005', 'nq-2'])
          got.push((await assignSkus(tx, [{ id, code: 'QQQ' }], numbers)).get(id) as string);
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
    expect(got).toEqual(['SKU-QQQ-000001', 'SKU-QQQ-000005', 'SKU-QQQ-000006']);
  });

  it('refuses to commit a full import without one accepted product (it would empty the catalog)', async () => {
    const { id } = await imports.start({ mode: 'FULL', metadata: META });
    await imports.append(id, 1, ['not json']);
    await expect(imports.commit(id)).rejects.toThrow(/empty the catalog/);
  });
});
