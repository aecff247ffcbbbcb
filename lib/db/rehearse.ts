import type { Db, Queryable } from './db.ts';

/** Thrown out of the transaction so the store rolls it back; carries the statements' result. */
class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rehearsal: rolled back on purpose');
  }
}

/**
 * Runs `fn` inside a transaction that is always rolled back, and returns what it returned: the
 * warm-up's orders (issue 48) run the store's own statements, parsed, planned and executed, and
 * nothing they wrote survives. A rollback writes no commit record, so the embedded store's WAL
 * sync (EMBEDDED_DB_FSYNC, lib/db/pglite-sync.ts) is not paid either: only a commit flushes.
 */
export async function rehearse<T>(
  db: Pick<Db, 'transaction'>,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  try {
    await db.transaction(async (tx) => {
      throw new RolledBack(await fn(tx));
    });
  } catch (err) {
    if (err instanceof RolledBack) return err.value as T;
    throw err;
  }
  throw new Error('rehearsal: the transaction committed');
}
