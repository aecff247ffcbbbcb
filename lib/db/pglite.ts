import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable } from './db.ts';

/**
 * Embedded store: PGlite runs the same SQL as Postgres from a pure npm package (no native
 * build, no server). It is single-connection and blocks the event loop while a query runs, so
 * hot paths batch their writes. See README "Storage" for the measured trade-off vs SQLite.
 */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  let dir: string | undefined;
  if (dataDir) {
    dir = join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  const pg = dir ? new PGlite(dir) : new PGlite();
  await pg.waitReady;
  const wrap = (q: Pick<PGlite, 'query'>): Queryable => ({
    async query<R>(sql: string, params: readonly unknown[] = []) {
      // PGlite's query() handles one statement; exec() handles several.
      return (await q.query<R>(sql, params as unknown[])).rows;
    },
  });
  const base = wrap(pg);
  return {
    kind: 'pglite',
    query: base.query,
    async exec(sql) {
      await pg.exec(sql);
    },
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    async ping() {
      await pg.query('SELECT 1');
    },
    close: () => pg.close(),
  };
}
