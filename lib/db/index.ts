import type { Config } from '../config.ts';
import type { Db } from './db.ts';

export type { Db, Migration, Queryable } from './db.ts';
export { migrate } from './db.ts';

/**
 * Postgres when DATABASE_URL is set, else the embedded store. Each driver is loaded only when it
 * is the one used: a process holds the source and code of the modules it imports, and PGlite's
 * and pg's are megabytes a process of the other topology never runs.
 */
export async function openDb(
  config: Pick<
    Config,
    | 'DATABASE_URL'
    | 'DATA_DIR'
    | 'EMBEDDED_DB'
    | 'EMBEDDED_DB_FSYNC'
    | 'EMBEDDED_DB_THREAD'
    | 'EMBEDDED_DB_NICE'
    | 'EMBEDDED_DB_TEMPLATE'
  >,
): Promise<Db> {
  if (config.DATABASE_URL) return (await import('./postgres.ts')).openPostgres(config.DATABASE_URL);
  const dataDir = config.EMBEDDED_DB === 'disk' ? config.DATA_DIR : undefined;
  // A new store starts from a template instead of initdb: the one named, else the build's.
  const template = config.EMBEDDED_DB_TEMPLATE ?? (await import('./pglite-template.ts')).shippedTemplate();
  // Run from source (tsx: `npm run dev`, tests), the store's thread could not load this
  // TypeScript module (Node 20's workers do not take tsx's loader), so it runs on this thread.
  const fromSource = import.meta.url.endsWith('.ts');
  // On this thread each commit syncs itself; the store's thread groups them (`on`).
  const sync = config.EMBEDDED_DB_FSYNC === 'off' ? 'off' : 'on';
  if (config.EMBEDDED_DB_THREAD === 'main' || fromSource)
    return (await import('./pglite.ts')).openPglite(dataDir, { template, sync });
  return (await import('./pglite-worker.ts')).openPgliteWorker(dataDir, {
    nice: config.EMBEDDED_DB_NICE,
    template,
    sync,
    grouped: config.EMBEDDED_DB_FSYNC === 'on',
  });
}
