import type { GroupedDb } from './pglite.ts';

/**
 * How the embedded store's thread answers the statements the request thread sends it
 * (pglite-worker.ts): in the order sent, each reply carrying its id, and with the group commit.
 * Apart from the thread so that a test can drive it with a store of its own making
 * (test/foundation/pglite-answer.test.ts).
 */

export type Message =
  | { op: 'query'; sql: string; params: readonly unknown[] }
  | { op: 'exec'; sql: string }
  | { op: 'close' };
export type Request = Message & { id: number };
export type Reply = {
  id: number;
  rows?: unknown[];
  error?: { message: string; props: Record<string, unknown> };
};

/** An error as it crosses the thread: its message and its own fields (code, detail, …). */
export function errorReply(id: number, err: unknown): Reply {
  const e = err instanceof Error ? err : new Error(String(err));
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) if (typeof v !== 'function' && typeof v !== 'object') props[k] = v;
  return { id, error: { message: e.message, props } };
}

/**
 * The longest a held reply waits for more of its group before the fence runs anyway: under a
 * steady stream the store is never idle, and every reply after a commit would wait for the
 * stream to end. About a sync's time on a virtual disk.
 */
export const GROUP_MS = 2;

/** Where replies go, and the messages that arrived while the store ran (taken without a turn). */
export interface AnswererIo {
  post(r: Reply): void;
  receive(): Request | undefined;
  close(): void;
}

/**
 * Returns what to call with each message, in arrival order. A store opened `grouped`
 * (`db.grouped`): the group commit (below); else each reply leaves as soon as it is made.
 */
export function storeAnswerer(
  db: Pick<GroupedDb, 'query' | 'exec' | 'close' | 'grouped' | 'inTransaction' | 'fence'>,
  io: AnswererIo,
): (m: Request) => void {
  // Group commit (EMBEDDED_DB_FSYNC=on, the default): a commit does not sync the WAL itself
  // (`synchronous_commit = off`). Its reply is held, with every reply after it, until the store
  // has nothing left to run or the first held reply has waited GROUP_MS; then one fence syncs
  // every commit since the last fence, and only then do they leave. Under load one sync answers
  // many commits; alone, a commit costs the fence's statement more. A reply made before any
  // commit of its group leaves at once: what it read was synced by an earlier fence. A SELECT
  // outside a transaction is taken for a read (its reply is not held for its own sake; a
  // function it called that wrote is synced by the next fence), a ROLLBACK commits nothing, and
  // a statement inside a transaction block commits nothing until its COMMIT. A BEGIN after a
  // commit is preceded by the fence, so a fence never runs inside a transaction block.
  const held: Reply[] = [];
  let heldSince = 0;
  let committed = false;
  let waiting = 0;
  // A fence that failed (the disk refused a sync: PostgreSQL PANICs on it) answers every held
  // and later request with its error: nothing unsynced is acknowledged.
  let broken: unknown;
  const release = async () => {
    if (committed) {
      committed = false;
      try {
        await db.fence();
      } catch (err) {
        broken = err;
      }
    }
    for (const r of held.splice(0)) io.post(broken === undefined ? r : errorReply(r.id, broken));
  };
  const reply = (m: Request, r: Reply) => {
    if (!db.grouped) return io.post(r);
    const read = m.op === 'query' && (m.sql === 'ROLLBACK' || /^\s*select\b/i.test(m.sql));
    if (!read && !db.inTransaction()) committed = true;
    if (!committed) return io.post(r);
    if (held.length === 0) heldSince = performance.now();
    held.push(r);
  };
  // Messages arrive while one runs (the other side does not wait for replies): each runs after
  // the one before it has answered, in arrival order, closing too. Replies carry their id.
  const answer = async (m: Request) => {
    if (m.op === 'close') {
      // Closed whatever happened before: a store whose fence failed still closes (and answers).
      try {
        await release();
        await db.close();
        io.post({ id: m.id, rows: [] });
      } catch (err) {
        io.post(errorReply(m.id, err));
      } finally {
        io.close();
      }
      return;
    }
    if (committed && m.op === 'query' && m.sql === 'BEGIN') await release();
    if (broken !== undefined) return io.post(errorReply(m.id, broken));
    try {
      if (m.op === 'query') reply(m, { id: m.id, rows: await db.query(m.sql, m.params) });
      else {
        await db.exec(m.sql);
        reply(m, { id: m.id, rows: [] });
      }
    } catch (err) {
      reply(m, errorReply(m.id, err));
    }
  };
  let last: Promise<void> = Promise.resolve();
  const enqueue = (m: Request) => {
    waiting++;
    last = last.then(async () => {
      await answer(m);
      waiting--;
      if (held.length === 0) return;
      // What arrived while the store ran joins this group before its fence.
      if (waiting === 0) for (let r = io.receive(); r; r = io.receive()) enqueue(r);
      if (waiting > 0 && performance.now() - heldSince < GROUP_MS) return;
      // Past GROUP_MS with more to run, not inside a transaction block (none is open while a
      // reply is held: a BEGIN after a commit fences first); with nothing to run, always.
      if (waiting === 0 || !db.inTransaction()) await release();
    });
  };
  return enqueue;
}
