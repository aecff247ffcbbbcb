/**
 * The in-memory embedded stores of the in-process test systems, reused within a test worker.
 *
 * Opening a PGlite store from the template costs ~0.8 s of CPU (a WebAssembly instance, the
 * 40 MB template untarred into its file system, Postgres' start), about half of an in-process
 * system's start, and the suite starts ~90 of them. A store a closed system leaves is emptied
 * instead (its `public` schema dropped and made again, so the next system's migrations and seeds
 * run as on a new store) and handed to the next system of the same worker. Only stores no test
 * can tell apart from a new one are reused: in memory (EMBEDDED_DB=memory, no data directory),
 * opened by the harness, never a store a test passes in or one on disk.
 *
 * A lease is a view of the store that refuses every call once its system has closed, so work a
 * closed system leaves behind (a timer, a late flush) fails as it would on a closed store and
 * never writes into the next system's data.
 */
import type { Db, Queryable } from '../lib/db/index.ts';
import { openPglite } from '../lib/db/pglite.ts';

export interface StoreLease {
  readonly db: Db;
  /** Empties the store and keeps it for the next lease (or closes it). Idempotent. */
  release(): Promise<void>;
}

/** Stores kept between systems: one per worker covers the files that run one system at a time. */
const KEEP = 1;
const idle: Db[] = [];
let opened = 0;

/** How many stores this worker has opened (the pool's test reads it). */
export const storesOpened = (): number => opened;

/** What makes a used store new again: its tables gone, the session's settings and locks reset. */
const EMPTY = `DROP SCHEMA public CASCADE;
CREATE SCHEMA public;
RESET ALL;
SELECT pg_advisory_unlock_all();
DISCARD TEMP;`;

async function openStore(template: string | undefined): Promise<Db> {
  const store = await openPglite(undefined, { template });
  opened += 1;
  return store;
}

export async function leaseStore(template: string | undefined): Promise<StoreLease> {
  const kept = idle.pop() ?? (await openStore(template));
  let open = true;
  const closed = () => Promise.reject(new Error('the embedded store was released: its system closed'));
  const db: Db = {
    kind: kept.kind,
    query: <R>(sql: string, params?: readonly unknown[]) => (open ? kept.query<R>(sql, params) : closed()),
    exec: (sql) => (open ? kept.exec(sql) : closed()),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => (open ? kept.transaction(fn) : closed()),
    ping: () => (open ? kept.ping() : closed()),
    // The platform never closes a store it was given; the harness releases it (below).
    close: async () => {},
  };
  return {
    db,
    async release() {
      if (!open) return;
      open = false;
      await kept.exec(EMPTY);
      if (idle.length < KEEP) idle.push(kept);
      else await kept.close();
    },
  };
}
