/**
 * lib/db/pglite-worker.ts: the embedded store on its own thread answers as the in-thread one
 * does (rows, types, errors), keeps transactions whole, and its data directory is the same.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import {
  openPgliteWorker as openCompiledOrLoaded,
  type SpawnStoreThread,
} from '../../lib/db/pglite-worker.ts';
import { testStoreWorker } from './support/pglite-worker-source.ts';

// Every store from the template (test/support/global-setup.ts), a new data directory too: a
// new data directory's initdb on disk is test/foundation/pglite-shipped-template.test.ts's, and
// here it cost ~5 s of CPU for what it showed again.
const openPgliteWorker = (dataDir: string | undefined, nice = 0) =>
  openCompiledOrLoaded(dataDir, { spawn: testStoreWorker, nice, ...TEST_PGLITE });

/** The niceness of each of this process's threads (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  const byThread = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name (field 2) is in parentheses and may hold spaces: count after it.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byThread.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byThread;
}

let inThread: Db;
let worker: Db;
const SCHEMA = `CREATE TABLE t (
  id bigserial PRIMARY KEY, name text UNIQUE NOT NULL, amount numeric(12, 2) NOT NULL CHECK (amount > 0),
  at timestamptz NOT NULL DEFAULT '2026-01-01T00:00:00Z', doc jsonb, n int)`;
beforeAll(async () => {
  [inThread, worker] = await Promise.all([openPglite(undefined, TEST_PGLITE), openPgliteWorker(undefined)]);
  for (const db of [inThread, worker]) await db.exec(SCHEMA);
}, 60_000);
afterAll(async () => {
  await inThread?.close();
  await worker?.close();
});

describe('the embedded store on a worker thread', () => {
  it.each([
    ['INSERT INTO t (name, amount, doc, n) VALUES (\'a\', 12.5, \'{"x":[1,"2"]}\', 7) RETURNING *', []],
    [
      'INSERT INTO t (name, amount) VALUES ($1, $2) RETURNING id, amount::text AS exact, at, doc',
      ['b', '0.10'],
    ],
    ['SELECT name, amount, at, doc, n FROM t ORDER BY id', []],
    ['SELECT count(*) AS c, sum(amount) AS s, max(id)::text AS m FROM t', []],
    ['SELECT $1::text AS echo, $2::int AS i, $3::jsonb AS j', ['é ☃', 42, '{"k":null}']],
  ] as const)('answers %s as the in-thread store does', async (sql, params) => {
    const [a, b] = [await inThread.query(sql, params), await worker.query(sql, params)];
    expect(b).toEqual(a);
    expect(b.length).toBeGreaterThan(0);
  });

  it.each([
    ["INSERT INTO t (name, amount) VALUES ('a', 1)", '23505'],
    ["INSERT INTO t (name, amount) VALUES ('neg', -1)", '23514'],
    ['SELECT * FROM missing_table', '42P01'],
    ['SELEC 1', '42601'],
  ])('refuses %s with the database error and its code', async (sql, code) => {
    const [a, b] = await Promise.all(
      [inThread, worker].map((db) =>
        db.query(sql).then(
          () => undefined,
          (e: Error & { code?: string }) => e,
        ),
      ),
    );
    expect(b).toBeInstanceOf(Error);
    expect({ message: b?.message, code: b?.code }).toEqual({ message: a?.message, code });
    // The store still answers after an error.
    expect(await worker.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('rolls a transaction back whole when its function throws, and commits it whole otherwise', async () => {
    await expect(
      worker.transaction(async (tx) => {
        await tx.query("INSERT INTO t (name, amount) VALUES ('rolled', 1)");
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await worker.query("SELECT name FROM t WHERE name = 'rolled'")).toEqual([]);
    const id = await worker.transaction(async (tx) => {
      const [row] = await tx.query<{ id: string }>(
        "INSERT INTO t (name, amount) VALUES ('kept', 1) RETURNING id::text AS id",
      );
      return row?.id;
    });
    expect(await worker.query("SELECT id::text AS id FROM t WHERE name = 'kept'")).toEqual([{ id }]);
  });

  it('runs concurrent transactions and statements one after another, never interleaved', async () => {
    await worker.query("INSERT INTO t (name, amount, n) VALUES ('counter', 1, 0)");
    // Read, then write what was read plus one: interleaved, some increments would be lost.
    const bump = () =>
      worker.transaction(async (tx) => {
        const [row] = await tx.query<{ n: number }>("SELECT n FROM t WHERE name = 'counter'");
        await new Promise((r) => setImmediate(r));
        await tx.query("UPDATE t SET n = $1 WHERE name = 'counter'", [(row?.n ?? 0) + 1]);
      });
    await Promise.all([
      ...Array.from({ length: 20 }, bump),
      ...Array.from({ length: 20 }, () => worker.query('SELECT 1')),
    ]);
    expect(await worker.query("SELECT n FROM t WHERE name = 'counter'")).toEqual([{ n: 20 }]);
  });

  it('sends statements without waiting for the previous reply, and runs them in the order sent', async () => {
    // Counts the statements sent and not yet answered (reply 0, the open, is the first awaited).
    let inFlight = 1;
    let most = 0;
    const counting: SpawnStoreThread = (module, data) => {
      const w = testStoreWorker(module, data);
      const post = w.postMessage.bind(w);
      w.postMessage = (m: unknown) => {
        most = Math.max(most, ++inFlight);
        post(m);
      };
      w.on('message', () => inFlight--);
      return w;
    };
    const db = await openCompiledOrLoaded(undefined, { spawn: counting, ...TEST_PGLITE });
    try {
      await db.exec('CREATE TABLE seq (id bigserial PRIMARY KEY, i int NOT NULL)');
      const sent = Array.from({ length: 20 }, (_, i) => db.query('INSERT INTO seq (i) VALUES ($1)', [i]));
      await Promise.all(sent);
      expect(most).toBeGreaterThan(1);
      const rows = await db.query<{ i: number }>('SELECT i FROM seq ORDER BY id');
      expect(rows.map((r) => r.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await db.close();
    }
  });

  it('holds a statement sent during a transaction until the transaction ends', async () => {
    let inside!: () => void;
    const started = new Promise<void>((r) => {
      inside = r;
    });
    const tx = worker
      .transaction(async (t) => {
        await t.query("INSERT INTO t (name, amount) VALUES ('uncommitted', 1)");
        inside();
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('rolled back');
      })
      .catch(() => 'rolled back');
    await started;
    // Run inside the transaction, it would see the uncommitted row.
    const seen = await worker.query<{ c: number }>(
      "SELECT count(*)::int AS c FROM t WHERE name = 'uncommitted'",
    );
    expect(await tx).toBe('rolled back');
    expect(seen).toEqual([{ c: 0 }]);
  });

  it('keeps its data directory: what one worker wrote, the next one (and the in-thread store) reads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ac-pglite-worker-'));
    const first = await openPgliteWorker(dir);
    // Made from the template (the open's reply says so), then opened as it is (Db.madeFrom).
    expect(first.madeFrom).toBe('template');
    await first.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('written by the first')");
    await first.close();
    const second = await openPgliteWorker(dir);
    expect(second.madeFrom).toBeUndefined();
    expect(await second.query('SELECT v FROM kept')).toEqual([{ v: 'written by the first' }]);
    await second.close();
    const same = await openPglite(dir);
    expect(await same.query('SELECT v FROM kept')).toEqual([{ v: 'written by the first' }]);
    await same.close();
  }, 60_000);

  it('fails the calls after it is closed instead of hanging', async () => {
    const db = await openPgliteWorker(undefined);
    await db.close();
    await expect(db.query('SELECT 1')).rejects.toThrow(/exited/);
  }, 30_000);

  it.runIf(existsSync('/proc/thread-self'))(
    'runs at the niceness it is given, on its own thread only (EMBEDDED_DB_NICE)',
    async () => {
      const before = threadNiceness();
      const niced = await openPgliteWorker(undefined, 10);
      const after = threadNiceness();
      await niced.close();
      const newAtTen = [...after].filter(([tid, nice]) => !before.has(tid) && nice === 10);
      expect(newAtTen).toHaveLength(1);
      // This thread, and every thread that was here before, keeps its priority.
      for (const [tid, nice] of before) if (after.has(tid)) expect(after.get(tid)).toBe(nice);
      expect(after.get(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]))).not.toBe(10);
      // Given 0, the store's thread keeps the process's priority.
      const plain = await openPgliteWorker(undefined, 0);
      const withPlain = threadNiceness();
      await plain.close();
      expect([...withPlain].filter(([tid, nice]) => !before.has(tid) && nice === 10)).toHaveLength(0);
    },
    60_000,
  );
});
