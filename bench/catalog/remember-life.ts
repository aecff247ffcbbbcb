/**
 * What the bounded life of remembered searches (search/remembered.ts, CATALOG_REMEMBER_MS) costs
 * at the bench's rates: the labelled queries of relevance.json searched in process, paced at
 * `rate` a second for `seconds`, on a PostgreSQL schema seeded here with `skus` SKUs (dropped at
 * the end), with a life of 30 s and with one of an hour (none ends in the run), alternated
 * `pairs` times on one seed. Per run: the reads of ranked matches (the first of each search and
 * those again past its life), the store's CPU per search (the backend's
 * /proc/<pid>/schedstat: one connection serves the searches and the reads beside them) and the
 * searches that kept the pace.
 *   tsx bench/catalog/remember-life.ts [skus] [seconds] [rate] [pairs] [exactUpTo]
 */
import { readFileSync } from 'node:fs';
import type { Db } from '../../lib/db/index.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { trigramSchema } from '../../subgraphs/pricing/catalog/migrations.ts';
import { searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import { createSqlCatalogSearch } from '../../subgraphs/pricing/catalog/search/sql.ts';
import { seededPostgres } from './postgres.ts';
import { readRelevanceSet } from './relevance.ts';

/** The statement that reads a remembered search's ranked matches (remembered.ts). */
const READ = /^SELECT m\.product_id, m\.rank FROM/;

interface Run {
  lifeMs: number;
  searches: number;
  reads: number;
  /** Reads of a search read before in the run: past its life. */
  again: number;
  cpuPerSearchMs: number;
}

async function run(
  db: Db,
  trigram: string,
  lifeMs: number,
  seconds: number,
  rate: number,
  exactUpTo?: number,
) {
  const reads: string[] = [];
  const counting = {
    ...db,
    query: (sql: string, params?: unknown[]) => {
      if (READ.test(sql)) reads.push(JSON.stringify(params));
      return db.query(sql, params as never);
    },
  } as Db;
  const search = createSqlCatalogSearch(counting, {
    trigram,
    secret: 'remember-life',
    rememberMs: lifeMs,
    ...(exactUpTo !== undefined ? { exactUpTo } : {}),
  });
  const [{ pid }] = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
  const cpu = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const queries = readRelevanceSet().queries;
  const started = performance.now();
  const cpuBefore = cpu();
  let searches = 0;
  while (performance.now() - started < seconds * 1000) {
    const q = queries[searches % queries.length];
    if (!q) break;
    await search.search(searchRequest({ query: q.query, filters: q.filters, limit: 10, variants: false }));
    searches++;
    const due = started + (searches * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await new Promise((r) => setTimeout(r, 200)); // the last reads beside
  return {
    lifeMs,
    searches,
    reads: reads.length,
    again: reads.length - new Set(reads).size,
    cpuPerSearchMs: (cpu() - cpuBefore) / searches,
  } satisfies Run;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [skus = 150_000, seconds = 65, rate = 200, pairs = 3, exactUpTo] = process.argv.slice(2).map(Number);
  const pg = await seededPostgres(skus);
  console.log(`${pg.skus} SKUs, ${pg.products} products seeded in ${pg.seedSeconds.toFixed(0)} s`);
  const db = await openPostgres(pg.url, 1);
  try {
    const trigram = await trigramSchema(db);
    console.log(
      '| life | searches | reads of ranked matches | of them again (past the life) | store CPU per search, ms |',
    );
    console.log('|---|---|---|---|---|');
    for (let i = 0; i < pairs; i++)
      for (const life of [30_000, 3_600_000]) {
        const r = await run(db, trigram, life, seconds, rate, exactUpTo);
        console.log(
          `| ${r.lifeMs / 1000} s | ${r.searches} | ${r.reads} | ${r.again} | ${r.cpuPerSearchMs.toFixed(3)} |`,
        );
      }
  } finally {
    await db.close();
    await pg.drop();
  }
}
