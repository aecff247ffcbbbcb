/**
 * The plan of a search page (subgraphs/pricing/catalog/search/statement.ts): the count over every
 * match buffers narrow rows. At 1,000,000 products a word matches 13,000–17,000 of them; when the
 * window that counts them carried each match's search vector (the rank computed above it), it
 * spilled past work_mem to disk (docs/benchmarks.md, "Catalog at 1,000,000 products").
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { Params, pageSql } from '../../subgraphs/pricing/catalog/search/statement.ts';

type PlanNode = { 'Node Type': string; Output?: string[]; Plans?: PlanNode[] };

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

let db: Db;
let ext: string;
beforeAll(async () => {
  db = await openPglite(undefined, TEST_PGLITE);
  ext = (await migrateCatalog(db)).trigram;
  await seedCatalog(db, 200);
}, 60_000);
afterAll(async () => {
  await db.close();
});

it.each([
  ['text', { query: 'office chair' }],
  ['browse', { filters: { categories: ['office'] } }],
])('the window counting a %s search buffers each match as its id and rank, not its row', async (_, input) => {
  const req = searchRequest({ ...input, limit: 10 });
  const p = new Params();
  const m = req.query ? ({ kind: 'text', query: req.query } as const) : ({ kind: 'browse' } as const);
  const sql = pageSql(req, m, ext, p);
  const rows = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (VERBOSE, FORMAT JSON) ${sql}`,
    p.values,
  );
  const plan = rows[0]?.['QUERY PLAN'][0].Plan as PlanNode;
  const window = nodes(plan).find((n) => n['Node Type'] === 'WindowAgg');
  expect(window).toBeDefined();
  const buffered = (window?.Plans ?? []).flatMap((c) => c.Output ?? []);
  expect(buffered.length).toBeGreaterThan(0);
  // The columns the rank reads (the search vector, the option values) are not carried through.
  expect(buffered.filter((o) => /^g(_\d+)?\.(search|option_values)$/.test(o))).toEqual([]);
});

it('each product holds every option key of its variants, which an option filter narrows by first', async () => {
  const rows = await db.query<{ products: number; with_keys: number; wrong: number }>(
    `SELECT count(*)::int AS products, count(*) FILTER (WHERE cardinality(g.variant_option_keys) > 0)::int AS with_keys,
            count(*) FILTER (WHERE g.variant_option_keys IS DISTINCT FROM ARRAY(
              SELECT DISTINCT k FROM catalog_products v, unnest(v.option_keys) k
               WHERE v.product_id = g.product_id ORDER BY k))::int AS wrong
       FROM catalog_product_groups g`,
  );
  expect(rows[0]?.products).toBeGreaterThan(0);
  expect(rows[0]?.with_keys).toBeGreaterThan(0);
  expect(rows[0]?.wrong).toBe(0);
});
