/**
 * An import's statements timed in process (issue 47): the bench's feed (bench/catalog/import.ts,
 * `writeFeed`, ids prefixed so every product is new) staged in chunks of 2,000 lines and
 * committed PARTIAL into a seeded catalog, then imported again unchanged; prints the staging and
 * commit times, products per second of each, and the statements that took longest, summed by
 * their text. The embedded store runs in a temporary directory (on disk, synced, as DATA_DIR
 * would); PostgreSQL in the database given, whose public schema is dropped and made again.
 * The bench's larger feed is of 16,000 SKUs (7,204 products) into the 10,000-SKU catalog.
 *   tsx bench/catalog/import-steps.ts <embedded | postgres://…/imp> [catalog-size] [feed-skus] [statements]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import type { Db, Queryable } from '../../lib/db/index.ts';
import { createLogger } from '../../lib/logger.ts';
import { seedCatalog } from '../../subgraphs/pricing/catalog/catalog.ts';
import { createCatalogImports } from '../../subgraphs/pricing/catalog/import/service.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { writeFeed } from './import.ts';

/**
 * By statement text: wall time, CPU time (this process's, the embedded store's included, and on
 * PostgreSQL its backends': the statement's own work is theirs), calls.
 */
type Spent = Map<string, { ms: number; cpuMs: number; calls: number }>;

/** The PostgreSQL database whose backends' CPU time counts (undefined: the embedded store). */
let backendsOf: string | undefined;

const cpuMs = () => cpuSeconds(backendsOf, false) * 1000;

const label = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 90);

/** `q` with each statement's time added to `spent` under its text. */
function timed<Q extends Queryable>(q: Q, spent: Spent): Q {
  const add = (sql: string, started: number, cpu: number) => {
    const s = spent.get(label(sql)) ?? { ms: 0, cpuMs: 0, calls: 0 };
    s.ms += performance.now() - started;
    s.cpuMs += cpuMs() - cpu;
    s.calls++;
    spent.set(label(sql), s);
  };
  const out = {
    ...q,
    async query(sql: string, params?: readonly unknown[]) {
      const started = performance.now();
      const cpu = cpuMs();
      try {
        return await q.query(sql, params);
      } finally {
        add(sql, started, cpu);
      }
    },
  } as Q;
  if (q.copyFrom) {
    const copy = q.copyFrom.bind(q);
    out.copyFrom = async (sql, rows) => {
      const started = performance.now();
      const cpu = cpuMs();
      try {
        return await copy(sql, rows);
      } finally {
        add(sql, started, cpu);
      }
    };
  }
  const db = q as unknown as Db;
  if (typeof db.transaction === 'function')
    (out as unknown as Db).transaction = (fn) => db.transaction((tx) => fn(timed(tx, spent)));
  return out;
}

async function open(target: string): Promise<{ db: Db; drop: () => Promise<void> }> {
  if (target === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'ac-import-'));
    const db = await (await import('../../lib/db/pglite.ts')).openPglite(dir);
    return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = await (await import('../../lib/db/postgres.ts')).openPostgres(target, 2);
  await db.exec(
    'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS pg_trgm',
  );
  return { db, drop: async () => {} };
}

const CHUNK = 2000;

/** The backends of the database counted, as the last full look at /proc found them. */
let backends: string[] = [];

/**
 * CPU seconds of this process and of the PostgreSQL backends of database `db` (their process
 * titles name it; /proc, so a server on this machine): on a loaded machine the wall time of a
 * step varied 3× between runs, its CPU time much less. `rescan`: look for the backends in all of
 * /proc (at each step); else read the ones found then (at each statement: a scan of /proc per
 * statement was itself a second of this process's CPU time in a run).
 */
function cpuSeconds(db: string | undefined, rescan = true): number {
  const own = process.cpuUsage();
  let pg = 0;
  if (db && rescan)
    backends = readdirSync('/proc').filter((pid) => {
      try {
        return (
          /^\d+$/.test(pid) &&
          readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)') &&
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${db} `)
        );
      } catch {
        return false; // A process that ended meanwhile.
      }
    });
  if (db)
    for (const pid of backends) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        pg += (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // A backend that ended meanwhile.
      }
    }
  return (own.user + own.system) / 1e6 + pg;
}

async function importOnce(db: Db, lines: readonly string[], spent: Spent, pgName: string | undefined) {
  const imports = createCatalogImports({
    db: timed(db, spent),
    clock: systemClock,
    log: createLogger(loadConfig({ LOG_LEVEL: 'silent' }), 'bench'),
    changed: async () => {},
  });
  const cpu0 = cpuSeconds(pgName);
  const started = performance.now();
  const imp = await imports.start({ mode: 'PARTIAL', metadata: { id: 'bench', target_country: 'US' } });
  for (let i = 0; i < lines.length; i += CHUNK)
    await imports.append(imp.id, i + 1, lines.slice(i, i + CHUNK));
  const staged = performance.now();
  const cpu1 = cpuSeconds(pgName);
  await imports.commit(imp.id);
  await imports.settled();
  const done = performance.now();
  const cpu2 = cpuSeconds(pgName);
  const end = await imports.get(imp.id);
  return {
    stageS: (staged - started) / 1000,
    commitS: (done - staged) / 1000,
    stageCpu: cpu1 - cpu0,
    commitCpu: cpu2 - cpu1,
    end,
  };
}

const print = (spent: Spent, top: number) => {
  for (const [sql, s] of [...spent].sort((a, b) => b[1].ms - a[1].ms).slice(0, top))
    console.log(
      `  ${(s.ms / 1000).toFixed(3).padStart(7)} s (CPU ${(s.cpuMs / 1000).toFixed(3)} s) ${String(s.calls).padStart(4)}×  ${sql.slice(0, 70)}`,
    );
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const [target = 'embedded', sizeArg = '10000', feedArg = '16000', topArg = '14'] = process.argv.slice(2);
  const { db, drop } = await open(target);
  const pgName = target === 'embedded' ? undefined : new URL(target).pathname.slice(1);
  backendsOf = pgName;
  try {
    await migrateCatalog(db);
    await seedCatalog(db, Number(sizeArg));
    const feed = await writeFeed(Number(feedArg));
    const lines = readFileSync(join(feed.dir, 'products.jsonl'), 'utf8').split('\n').filter(Boolean);
    rmSync(feed.dir, { recursive: true, force: true });
    for (const run of ['new', 'unchanged']) {
      const spent: Spent = new Map();
      const r = await importOnce(db, lines, spent, pgName);
      const n = lines.length;
      console.log(
        `${target === 'embedded' ? 'embedded' : 'postgres'} ${run}: ${n} products, stage ${r.stageS.toFixed(2)} s, commit ${r.commitS.toFixed(2)} s ` +
          `(${Math.round(n / r.commitS)}/s), both ${Math.round(n / (r.stageS + r.commitS))}/s; ${r.end?.status} ` +
          `created ${r.end?.created} updated ${r.end?.updated} unchanged ${r.end?.unchanged}; ` +
          `CPU s (this process${pgName ? ' + its backends' : ''}): stage ${r.stageCpu.toFixed(2)}, commit ${r.commitCpu.toFixed(2)}`,
      );
      print(spent, Number(topArg));
    }
  } finally {
    await db.close();
    await drop();
  }
}
