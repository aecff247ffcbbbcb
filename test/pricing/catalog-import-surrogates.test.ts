/**
 * Issue 47: a feed line holding a lone surrogate escape (`"\ud800"`, `"\udc00"`, a high
 * surrogate not followed by a low one) is JSON but no Unicode text: PostgreSQL's jsonb and its
 * UTF-8 text refuse it. It must be refused at append as a line of its own (number, JSONPath,
 * reason, nothing stored), never left to fail the commit midway; a paired escape (an emoji)
 * stays accepted and comes back as written. On the embedded store and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import type { Db } from '../../lib/db/index.ts';
import { createLogger } from '../../lib/logger.ts';
import { feedProducts } from '../../subgraphs/pricing/catalog/feed/export.ts';
import {
  type CatalogImport,
  type CatalogImports,
  createCatalogImports,
} from '../../subgraphs/pricing/catalog/import/service.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { createSqlCatalogProducts } from '../../subgraphs/pricing/catalog/products.ts';
import { catalogStores } from './support/catalog-stores.ts';

const META = { id: 'feed_surrogates', target_country: 'US' };

/** A one-variant feed product's line, priced in USD cents, its title written as `titleJson` (raw JSON text). */
const feedLine = (id: string, titleJson: string) =>
  `{"id":"${id}","title":${titleJson},"variants":[{"id":"${id}-v","title":"V","price":{"amount":100,"currency":"USD"}}]}`;

describe.each(catalogStores('surrogates', 2))('catalog import of surrogate escapes: %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let imports: CatalogImports;
  let products: ReturnType<typeof createSqlCatalogProducts>;

  beforeAll(async () => {
    ({ db, drop } = await open());
    const schema = await migrateCatalog(db);
    products = createSqlCatalogProducts(db, {
      trigram: schema.trigram,
      secret: 'a-test-secret-of-32-characters!!',
    });
    imports = createCatalogImports({
      db,
      clock: systemClock,
      log: createLogger(loadConfig({ LOG_LEVEL: 'silent' }), 'test'),
      changed: async () => {},
    });
  });
  afterAll(async () => {
    await imports.settled();
    await db.close();
    await drop();
  });

  async function importLines(lines: string[]): Promise<CatalogImport> {
    const { id } = await imports.start({ mode: 'PARTIAL', metadata: META });
    await imports.append(id, 1, lines);
    await imports.commit(id);
    await imports.settled();
    return (await imports.get(id, 1000)) as CatalogImport;
  }

  it('refuses each line with a lone surrogate, by number and JSONPath, and commits the others', async () => {
    const lines = [
      feedLine('ok-1', '"Plain"'),
      feedLine('s-1', '"a\\ud800"'),
      feedLine('s-2', '"\\udc00b"'),
      feedLine('s-3', '"\\ud83dx"'),
      feedLine('s-4', '"\\uD800\\uD800"'),
      feedLine('s-5', '"\\ude00\\ud83d"'),
      feedLine('s-6', '"ok"').replace('"title":"V"', '"title":"\\udbff"'),
      // A member name: the schema's refusal names it, and its path escapes the surrogate.
      feedLine('s-7', '"ok"').replace('{"id"', '{"x\\udfff":1,"id"'),
      feedLine('ok-2', '"Smile \\ud83d\\ude00"'),
    ];
    const done = await importLines(lines);
    expect(done.note).toBeNull();
    expect(done).toMatchObject({ status: 'DONE', linesRead: 9, accepted: 2, refused: 7, created: 2 });
    expect(done.errors.map((e) => [e.line, e.path])).toEqual([
      [2, '$.title'],
      [3, '$.title'],
      [4, '$.title'],
      [5, '$.title'],
      [6, '$.title'],
      [7, '$.variants[0].title'],
      [8, "$['x\\udfff']"],
    ]);
    for (const e of done.errors.slice(0, 6)) expect(e.reason).toMatch(/lone surrogate/);
    for (const id of ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6', 's-7'])
      expect(await products.product(id)).toBeUndefined();
    expect((await products.product('ok-1'))?.product.title).toBe('Plain');
  });

  it('refuses feed metadata PostgreSQL cannot store (jsonb) before it starts an import', async () => {
    const before = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_imports');
    for (const [id, reason] of [
      ['feed_\ud800', /lone surrogate/],
      ['feed_\udc00', /lone surrogate/],
      ['feed_\u0000', /U\+0000/],
    ] as const)
      await expect(imports.start({ mode: 'PARTIAL', metadata: { id } })).rejects.toMatchObject({
        path: '$.id',
        message: expect.stringMatching(reason),
      });
    expect(await db.query('SELECT count(*)::int AS n FROM catalog_imports')).toEqual(before);
    const started = await imports.start({ mode: 'PARTIAL', metadata: { id: 'feed_\u{1F600}' } });
    expect(started.feedId).toBe('feed_\u{1F600}');
  });

  it('keeps a paired escape (an emoji) and exports it as the same character', async () => {
    const done = await importLines([feedLine('emoji-1', '"Smile \\ud83d\\ude00 \\uD83D\\uDE00"')]);
    expect(done).toMatchObject({ status: 'DONE', accepted: 1, refused: 0 });
    const title = (await products.product('emoji-1'))?.product.title as string;
    expect(Buffer.from(title, 'utf8').toString('hex')).toBe(
      Buffer.from('Smile \u{1F600} \u{1F600}', 'utf8').toString('hex'),
    );
    const exported: Record<string, unknown>[] = [];
    for await (const p of feedProducts(db, 'USD', { productIds: ['emoji-1'] })) exported.push(p);
    expect(exported.map((p) => p.title)).toEqual(['Smile \u{1F600} \u{1F600}']);
    // Exported as JSON, it is the same bytes as the line's title read back by any reader.
    expect(JSON.stringify(exported[0]?.title)).toBe('"Smile 😀 😀"');
  });

  it('reports a refusal quoting a product id cut inside a surrogate pair without a lone half', async () => {
    // A repeated product id is quoted in the reason, cut to 64 UTF-16 units: an emoji across
    // that cut must not leave its high half alone in the stored reason.
    const id = `${'p'.repeat(63)}\\ud83d\\ude00`;
    const done = await importLines([feedLine(id, '"A"'), feedLine(id, '"B"')]);
    expect(done).toMatchObject({ status: 'DONE', accepted: 1, refused: 1 });
    expect(done.errors[0]?.reason).toBe(`product ${'p'.repeat(63)} is on line 1 already`);
  });
});
