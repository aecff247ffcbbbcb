/**
 * The catalog search's SQL timed in process, one search at a time, over the labelled queries of
 * relevance.json (the bench's first page of 10, no variants): per query its matches, its median
 * time and each statement's, and with `explain` each statement's `EXPLAIN (ANALYZE, BUFFERS)`
 * written to a directory. For a catalog too large to seed per run: a PostgreSQL schema seeded
 * once and kept (`tsx bench/catalog/postgres.ts` seeds and drops; seed into your own schema with
 * seedCatalog for this), or the embedded store seeded here (`embedded`, 10,000 SKUs).
 *   tsx bench/catalog/in-process.ts <schema | embedded> [rounds] [explain <dir>]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * The CPU time the store has used, in ms: PostgreSQL on this machine, its backend process's
 * /proc/<pid>/schedstat (nanoseconds on a CPU); the embedded store, this process's CPU
 * (process.cpuUsage: PGlite runs on this thread, so the search's own JavaScript is counted with
 * it); undefined where it cannot be read (a remote server). On a machine shared with other work,
 * wall time measures the queue for the CPU as much as the search; this measures the search.
 */
async function backendCpu(db: Db): Promise<(() => number | undefined) | undefined> {
  if (db.kind !== 'postgres') {
    return () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
  }
  const rows = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const file = `/proc/${rows[0]?.pid}/schedstat`;
  const read = () => {
    try {
      return Number(readFileSync(file, 'utf8').split(' ')[0]) / 1e6;
    } catch {
      return undefined;
    }
  };
  return read() === undefined ? undefined : read;
}

/** Mean, p50, p90, p99 and max of `xs`. */
function spread(xs: number[]): string {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return `mean ${mean.toFixed(2)}, p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}`;
}

type Row = {
  id: string;
  kind: string;
  total: number;
  ms: number[];
  cpu: number[];
  statements: string;
  /** The first round's search: the store's CPU (ms) and its statements (a first search reads more). */
  first: { cpu?: number; statements: number };
};

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
  const rows: Row[] = [];
  /** Every search after the first round: the bench's warm-up has seen each query once (degrade.ts). */
  const warm: { ms: number[]; cpu: number[] } = { ms: [], cpu: [] };
  for (let r = 0; r < rounds; r++)
    for (const [n, q] of readRelevanceSet().queries.entries()) {
      log.length = 0;
      const input: SearchInput = { query: q.query, filters: q.filters, limit: 10, variants: false };
      const cpu = await backendCpu(db);
      const cpuBefore = cpu?.();
      const started = performance.now();
      const page = await search.search(searchRequest(input));
      const ms = performance.now() - started;
      const cpuMs = cpuBefore !== undefined ? (cpu?.() ?? cpuBefore) - cpuBefore : undefined;
      rows[n] ??= {
        id: q.id,
        kind: q.kind,
        total: page.total,
        ms: [],
        cpu: [],
        statements: '',
        first: { ...(cpuMs !== undefined ? { cpu: cpuMs } : {}), statements: log.length },
      };
      const row = rows[n];
      row.ms.push(ms);
      if (cpuMs !== undefined) row.cpu.push(cpuMs);
      if (r > 0) {
        warm.ms.push(ms);
        if (cpuMs !== undefined) warm.cpu.push(cpuMs);
      }
      row.statements = log.map((s) => s.ms.toFixed(1)).join(' + ');
      if (mode === 'explain' && r === rounds - 1) await explain(db, dir, q.id, log);
    }
  console.log(
    '| query | kind | matches | ms, median | store CPU ms, median | first search: store CPU ms, statements | last round, per statement |\n|---|---|---|---|---|---|---|',
  );
  for (const r of rows)
    console.log(
      `| ${r.id} | ${r.kind} | ${r.total} | ${median(r.ms).toFixed(1)} | ${r.cpu.length > 0 ? median(r.cpu).toFixed(1) : '-'} | ${r.first.cpu?.toFixed(1) ?? '-'}, ${r.first.statements} | ${r.statements} |`,
    );
  console.log(
    `sum of medians ${rows.reduce((s, r) => s + median(r.ms), 0).toFixed(0)} ms over ${rows.length} queries`,
  );
  if (warm.ms.length > 0)
    console.log(`rounds 2-${rounds}, ${warm.ms.length} searches, ms: ${spread(warm.ms)}`);
  if (warm.cpu.length > 0) console.log(`rounds 2-${rounds}, store CPU ms: ${spread(warm.cpu)}`);
  await db.close();
}
