import type { Db } from './db.ts';

/**
 * Dead row versions of a churning table, cleared on the embedded store. PGlite runs no
 * autovacuum (one process, no background workers): every UPDATE or DELETE leaves the old
 * version in the table and in its indexes, and a scan for the few live rows (an outbox's or a
 * delivery queue's claim) reads past all of them, on the event loop. Measured on the order
 * outbox: after 20,000 orders one claim read 2,107 pages (76 ms) to find nothing, and a vacuum
 * after every 1,000 changed rows takes 2.2–3.0 ms (docs/performance.md, "Fourth pass").
 *
 * A store calls the returned function with how many rows it just changed; after `everyRows`
 * of them it vacuums `table`. On Postgres autovacuum does this already, so it does nothing. A
 * vacuum that fails (the store closing) is tried again after the next change: the rows were
 * written either way.
 */
export function vacuumAfterChanges(
  db: Pick<Db, 'kind' | 'exec'>,
  table: string,
  everyRows = 1000,
): (changed: number) => Promise<void> {
  let since = 0;
  return async (changed) => {
    if (db.kind !== 'pglite') return;
    since += changed;
    if (since < everyRows) return;
    try {
      await db.exec(`VACUUM ${table}`);
      since = 0;
    } catch {
      // tried again after the next change (see above)
    }
  };
}
