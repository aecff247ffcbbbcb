/**
 * The SQL adapter of the idempotency store (the embedded ACP routes' records, kept across a
 * restart) against the store's contract, on PGlite and on the machine's PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import { idempotencyMigrations, sqlIdempotencyStore } from '../../gateway/agent/idempotency/sql.ts';
import type { IdempotencyStore } from '../../gateway/agent/idempotency/store.ts';
import { freshPostgres } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { idempotencyContract, times } from './agent-state.contract.ts';

/** Every store of the contract gets keys of its own in the one table (the contract reuses `k`). */
function keyed(store: IdempotencyStore): IdempotencyStore {
  const p = `${randomUUID()}:`;
  return {
    begin: (k, fp, now) => store.begin(p + k, fp, now),
    complete: (k, fp, reply, now) => store.complete(p + k, fp, reply, now),
    release: (k) => store.release(p + k),
  };
}

describe('SQL idempotency store on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite(undefined);
    await migrate(db, idempotencyMigrations);
  });
  afterAll(() => db?.close());
  idempotencyContract(() => keyed(sqlIdempotencyStore(db, times)));
});

describe('SQL idempotency store on PostgreSQL', () => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const pg = await freshPostgres('idem');
    drop = pg.drop;
    db = await openPostgres(pg.url);
    await migrate(db, idempotencyMigrations);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });
  idempotencyContract(() => keyed(sqlIdempotencyStore(db, times)));
});
