const T0 = Date.now();

/**
 * The SQL adapter of the idempotency store (the embedded ACP routes' records, kept across a
 * restart) against the store's contract, on PGlite and on the machine's PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyMigrations, sqlIdempotencyStore } from '../../gateway/agent/idempotency/sql.ts';
import type { IdempotencyStore } from '../../gateway/agent/idempotency/store.ts';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { idempotencyContract, times } from './agent-state.contract.ts';

/**
 * Every store of the contract gets keys of its own in the one table (the contract reuses `k`),
 * and is opened when first used (the contract's factory is synchronous; opening loads what the
 * table knows).
 */
function keyed(open: () => Promise<IdempotencyStore>): IdempotencyStore {
  const p = `${randomUUID()}:`;
  let store: Promise<IdempotencyStore> | undefined;
  const s = () => {
    store ??= open();
    return store;
  };
  return {
    begin: async (k, fp, now) => (await s()).begin(p + k, fp, now),
    complete: async (k, fp, reply, now) => (await s()).complete(p + k, fp, reply, now),
    release: async (k) => (await s()).release(p + k),
  };
}

/** Runs `body` on a new embedded store with the records' table, closed afterwards. */
async function onFreshPglite(body: (db: Db) => Promise<void>): Promise<void> {
  const db = await openPglite(undefined, TEST_PGLITE);
  try {
    await migrate(db, idempotencyMigrations);
    await body(db);
  } finally {
    await db.close();
  }
}

describe('SQL idempotency store on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, idempotencyMigrations);
  });
  afterAll(() => db?.close());
  idempotencyContract(() => keyed(() => sqlIdempotencyStore(db, times)));
});

describe('SQL idempotency store on PGlite, past what it keeps in memory', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, idempotencyMigrations);
  });
  afterAll(() => db?.close());
  // Knows one record in memory: every other finished one is found in the table.
  idempotencyContract(() => keyed(() => sqlIdempotencyStore(db, times, { maxKnown: 1 })));
});

describe('SQL idempotency store across a restart', () => {
  it('replays a reply finished before the store was opened again, and refuses another body', () =>
    onFreshPglite(async (db) => {
      const reply = { status: 201, body: '{"id":"cs_1"}' };
      const first = await sqlIdempotencyStore(db, times);
      expect(await first.begin('k', 'fp', T0)).toEqual({ kind: 'started' });
      await first.complete('k', 'fp', reply, T0);
      const again = await sqlIdempotencyStore(db, times);
      expect(await again.begin('k', 'fp', T0 + 1)).toEqual({ kind: 'replay', reply });
      expect(await again.begin('k', 'other', T0 + 1)).toEqual({ kind: 'mismatch' });
      expect(await again.begin('k', 'fp', T0 + times.ttlMs + 1)).toEqual({ kind: 'started' });
    }));
});

describe('SQL idempotency store, a reply still being written', () => {
  it('replays it to a retry that comes before its write ends (an answer sent before its reply was stored)', () =>
    onFreshPglite(async (db) => {
      const store = await sqlIdempotencyStore(db, times);
      const reply = { status: 201, body: '{"id":"cs_2"}' };
      expect(await store.begin('w', 'fp', T0)).toEqual({ kind: 'started' });
      const writing = store.complete('w', 'fp', reply, T0);
      expect(await store.begin('w', 'fp', T0 + 1)).toEqual({ kind: 'replay', reply });
      expect(await store.begin('w', 'other', T0 + 1)).toEqual({ kind: 'mismatch' });
      await writing;
      expect(await store.begin('w', 'fp', T0 + 2)).toEqual({ kind: 'replay', reply });
    }));
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
  idempotencyContract(() => keyed(() => sqlIdempotencyStore(db, times)));
});

describe('SQL idempotency store, replies finished together', () => {
  it('writes replies finished in one turn together, and each key replays its own (also from the table)', () =>
    onFreshPglite(async (db) => {
      const store = await sqlIdempotencyStore(db, times);
      const keys = Array.from({ length: 30 }, (_, i) => `together-${i}-${randomUUID()}`);
      for (const k of keys) expect((await store.begin(k, `fp-${k}`, T0)).kind).toBe('started');
      // All in one turn: they reach the table as one or a few statements.
      await Promise.all(
        keys.map((k, i) => store.complete(k, `fp-${k}`, { status: 201, body: `{"n":${i}}` }, T0)),
      );
      const reopened = await sqlIdempotencyStore(db, times, { maxKnown: 1 });
      for (const [i, k] of keys.entries()) {
        expect(await store.begin(k, `fp-${k}`, T0 + 1)).toEqual({
          kind: 'replay',
          reply: { status: 201, body: `{"n":${i}}` },
        });
        expect(await reopened.begin(k, `fp-${k}`, T0 + 1)).toEqual({
          kind: 'replay',
          reply: { status: 201, body: `{"n":${i}}` },
        });
        expect((await reopened.begin(k, 'another body', T0 + 1)).kind).toBe('mismatch');
      }
    }));
});

describe('SQL idempotency store, expired records', () => {
  it('sweeps the expired records out of the table and out of memory, keeping the live ones', () =>
    onFreshPglite(async (db) => {
      const store = await sqlIdempotencyStore(db, times);
      const finish = async (k: string, now: number) => {
        expect((await store.begin(k, 'fp', now)).kind).toBe('started');
        await store.complete(k, 'fp', { status: 200, body: '{}' }, now);
      };
      // 499 replies kept at T0, then the 500th finished after they all expired: it sweeps.
      for (let i = 0; i < 499; i++) await finish(`old-${i}`, T0);
      const later = T0 + times.ttlMs + 1;
      await finish('new', later);
      // The sweep runs beside the reply; the next statement on the one connection follows it.
      const rows = await db.query<{ key: string }>('SELECT key FROM agent_idempotency ORDER BY key');
      expect(rows.map((r) => r.key)).toEqual(['new']);
      expect((await store.begin('old-0', 'fp', later)).kind).toBe('started');
      expect((await store.begin('new', 'fp', later)).kind).toBe('replay');
    }));
});
