import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { Db } from '../../../lib/db/index.ts';
import { REHEARSAL_OWNER_SUFFIX } from './migrations.ts';
import type { CheckoutSession } from './session.ts';
import { sqlCheckoutSessionStore } from './sql.ts';
import type { CheckoutSessionStore } from './store.ts';

/**
 * The session store with the sessions it wrote or read kept in memory, for a database this
 * process alone writes (the embedded PGlite): a step of a session then reads no row. With
 * replicas (PostgreSQL) another process may have changed a session, so the plain store is used
 * there.
 *
 * Being the only writer also lets a completion skip two of its three session writes on the way
 * to its answer (docs/acp.md, "One process, one writer"): its `complete_in_progress` mark is
 * held here only (`hold`: the lock it is needs no other process to see it, and a crash, which
 * loses the mark, loses the embedded spend ledger too), and its final version is visible at
 * once and written behind the answer (`replaceBehind`). What a crash in between leaves (the
 * order stands, the row is still the session before its completion) is mended at start
 * (gateway/agent/checkout/service.ts, `recoverCompletions`).
 */
export function cachedSessionStore(inner: CheckoutSessionStore, max = 10_000): CheckoutSessionStore {
  const sessions = new BoundedMap<string, CheckoutSession>(max);
  /**
   * Sessions ahead of their row (a held mark, a write behind in flight), with the version the
   * next write must find in the table. Never evicted: what they hold is in no row yet.
   */
  const ahead = new Map<string, { readonly s: CheckoutSession; readonly stored: number }>();
  const behind = new Set<Promise<boolean>>();
  /** Writes behind that failed twice: their sessions are right in memory, not in the table. */
  let unwritten = 0;
  const known = (id: string) => ahead.get(id)?.s ?? sessions.get(id);

  /** The row is what stands (a write failed or lost a race): memory forgets the session. */
  const forget = (id: string) => {
    ahead.delete(id);
    sessions.delete(id);
  };

  async function replace(next: CheckoutSession): Promise<boolean> {
    const a = ahead.get(next.id);
    if (a && a.s.version !== next.version - 1) return false;
    const ok = await inner.replace(next, a ? a.stored : next.version - 1);
    if (ahead.get(next.id) === a) ahead.delete(next.id);
    if (ok) sessions.set(next.id, next);
    else forget(next.id);
    return ok;
  }

  return {
    async insert(s) {
      const ok = await inner.insert(s);
      if (ok) sessions.set(s.id, s);
      return ok;
    },
    async get(id) {
      const mine = known(id);
      if (mine) return mine;
      const s = await inner.get(id);
      // A change made here while the row was read is newer than the row.
      const meanwhile = known(id);
      if (meanwhile) return meanwhile;
      if (s) sessions.set(id, s);
      return s;
    },
    replace,
    list: (q) => inner.list(q),
    async removeRehearsedBefore(before) {
      while (behind.size > 0) await Promise.allSettled([...behind]);
      const n = await inner.removeRehearsedBefore(before);
      for (const [id, s] of sessions)
        if (s.owner.endsWith(REHEARSAL_OWNER_SUFFIX) && s.updatedAt < before) forget(id);
      return n;
    },
    async remove(ids) {
      // The writes behind land first: one landing after the DELETE would bring its row back.
      while (behind.size > 0) await Promise.allSettled([...behind]);
      const n = await inner.remove(ids);
      for (const id of ids) forget(id);
      return n;
    },
    async hold(next) {
      const a = ahead.get(next.id);
      const current = known(next.id);
      // Not in memory (evicted since it was read): written, as without a hold.
      if (!current) return replace(next);
      if (current.version !== next.version - 1) return false;
      ahead.set(next.id, { s: next, stored: a ? a.stored : current.version });
      return true;
    },
    replaceBehind(next) {
      const a = ahead.get(next.id);
      const current = known(next.id);
      if (!current || current.version !== next.version - 1) return false;
      // Once this write lands the row is at next.version: a change after it is written over that
      // (the store's writes of one session run in the order they were asked for).
      const entry = { s: next, stored: next.version };
      ahead.set(next.id, entry);
      const over = a ? a.stored : next.version - 1;
      const landed = (ok: boolean) => {
        // Lost its compare-and-set: another writer's row stands, and memory forgets this one.
        if (!ok) forget(next.id);
        else if (ahead.get(next.id) === entry) {
          ahead.delete(next.id);
          sessions.set(next.id, next);
        }
        return ok;
      };
      // A write that failed (the store did not answer) is tried once more. Should that fail too,
      // memory keeps the session as answered (reads stay right until a restart) and the store
      // is marked not clean: the next start mends the row from the order (recoverCompletions).
      const write = inner
        .replace(next, over)
        .catch(() => new Promise<void>((r) => setTimeout(r, RETRY_MS)).then(() => inner.replace(next, over)))
        .then(landed, (err: unknown) => {
          unwritten++;
          // The row is still at `over`: the next change of this session is written over that.
          if (ahead.get(next.id) === entry) ahead.set(next.id, { s: next, stored: over });
          throw err;
        });
      behind.add(write);
      void write.catch(() => {}).finally(() => behind.delete(write));
      return write;
    },
    async settled() {
      // Until none is left: a request still running while the server closes may start one.
      while (behind.size > 0) await Promise.allSettled([...behind]);
      return unwritten === 0;
    },
  };
}

/** How long a failed write behind waits before its second try. */
const RETRY_MS = 100;

const perDb = new WeakMap<Db, CheckoutSessionStore>();

/**
 * The one session store of this process for `db`: the checkout service and the order webhooks'
 * routing read the same sessions, so a session held or written behind here (cached store) is
 * what the routing sees too. Embedded (PGlite: this process alone writes it) the cached store;
 * else the plain SQL store.
 */
export function checkoutSessionStoreFor(db: Db): CheckoutSessionStore {
  let store = perDb.get(db);
  if (!store) {
    store =
      db.kind === 'pglite' ? cachedSessionStore(sqlCheckoutSessionStore(db)) : sqlCheckoutSessionStore(db);
    perDb.set(db, store);
  }
  return store;
}
