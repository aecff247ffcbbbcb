/**
 * The catalog search's SQL timed in process, one search at a time, over the labelled queries of
 * relevance.json (the bench's first page of 10, no variants): per query its matches, its median
 * time and each statement's, and with `explain` each statement's `EXPLAIN (ANALYZE, BUFFERS)`
 * written to a directory. For a catalog too large to seed per run: a PostgreSQL schema seeded
 * once and kept (`tsx bench/catalog/postgres.ts` seeds and drops; seed into your own schema with
 * seedCatalog for this), or the embedded store seeded here (`embedded`, 10,000 SKUs).
 *   tsx bench/catalog/in-process.ts <schema | embedded> [rounds] [explain <dir>]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_DATABASE_URL } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { migrateCatalog, trigramSchema } from '../../subgraphs/pricing/catalog/migrations.ts';
import { type SearchInput, searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { readRelevanceSet } from './relevance.ts';

type Statement = { sql: string; params: unknown[]; ms: number };

async function open(target: string): Promise<Db> {
  if (target === 'embedded') {
    const db = await (await import('../../lib/db/pglite.ts')).openPglite(undefined);
    await migrateCatalog(db);
    await seedCatalog(db, 10_000);
    return db;
  }
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${target}`);
  return (await import('../../lib/db/postgres.ts')).openPostgres(url.toString(), 1);
}

/** The store's queries as the search sends them, each timed, into `log`. */
function logging(db: Db, log: Statement[]): Db {
  return {
    ...db,
    async query(sql: string, params?: unknown[]) {
      const started = performance.now();
      const rows = await db.query(sql, params as never);
      log.push({ sql, params: params ?? [], ms: performance.now() - started });
      return rows;
    },
  } as Db;
}

async function explain(db: Db, dir: string, id: string, log: Statement[]): Promise<void> {
  let text = '';
  for (const s of log) {
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`,
      s.params as never,
    );
    text += `-- ${s.ms.toFixed(1)} ms\n${s.sql}\n-- params ${JSON.stringify(s.params)}\n`;
    text += `${plan.map((r) => r['QUERY PLAN']).join('\n')}\n\n`;
  }
  writeFileSync(join(dir, `${id}.txt`), text);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

if (import.meta.url === `file://${process.argv[1]}`) {
  const [target = 'embedded', roundsArg = '3', mode, dir = 'plans'] = process.argv.slice(2);
  const db = await open(target);
  const log: Statement[] = [];
  const search = createSqlCatalogSearch(logging(db, log), {
    trigram: await trigramSchema(db),
    secret: 'in-process',
  });
  if (mode === 'explain') mkdirSync(dir, { recursive: true });
  const rounds = Number(roundsArg);
  const rows: { id: string; kind: string; total: number; ms: number[]; statements: string }[] = [];
  for (let r = 0; r < rounds; r++)
    for (const [n, q] of readRelevanceSet().queries.entries()) {
      log.length = 0;
      const input: SearchInput = { query: q.query, filters: q.filters, limit: 10, variants: false };
      const started = performance.now();
      const page = await search.search(searchRequest(input));
      const ms = performance.now() - started;
      rows[n] ??= { id: q.id, kind: q.kind, total: page.total, ms: [], statements: '' };
      const row = rows[n];
      row.ms.push(ms);
      row.statements = log.map((s) => s.ms.toFixed(1)).join(' + ');
      if (mode === 'explain' && r === rounds - 1) await explain(db, dir, q.id, log);
    }
  console.log('| query | kind | matches | ms, median | last round, per statement |\n|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.id} | ${r.kind} | ${r.total} | ${median(r.ms).toFixed(1)} | ${r.statements} |`);
  console.log(
    `sum of medians ${rows.reduce((s, r) => s + median(r.ms), 0).toFixed(0)} ms over ${rows.length} queries`,
  );
  await db.close();
}
