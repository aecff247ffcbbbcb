import type { CheckoutSession, SessionStatus } from './session.ts';

/**
 * Where checkout sessions live: the SQL store (PGlite embedded, PostgreSQL distributed), so a
 * session survives a restart and any gateway replica can serve any step of it.
 */
export interface CheckoutSessionStore {
  /** Stores a new session (version 0); false when the id exists already. */
  insert(s: CheckoutSession): Promise<boolean>;
  get(id: string): Promise<CheckoutSession | null>;
  /**
   * Writes `next` only if the stored session is still at `over` (by default `next.version - 1`);
   * false (nothing written) when another change came first.
   */
  replace(next: CheckoutSession, over?: number): Promise<boolean>;
  /** Sessions by status, newest first (the console's Checkout page); at most `limit`. */
  list(q: {
    readonly statuses?: readonly SessionStatus[];
    readonly limit: number;
  }): Promise<CheckoutSession[]>;
  /**
   * Deletes these sessions (the warm-up's rehearsed ones, which must leave no row behind:
   * gateway/agent/rehearsal.ts); how many it deleted.
   */
  remove(ids: readonly string[]): Promise<number>;
  /**
   * Deletes the warm-up's sessions (owner ending in REHEARSAL_OWNER_SUFFIX) last changed before
   * `before` (ms): those a crash during a warm-up left (a replica warming now has newer ones).
   */
  removeRehearsedBefore(before: number): Promise<number>;
  /**
   * Where this process is the table's only writer (the embedded store, cached.ts): `next` (a
   * completion's `complete_in_progress` mark) replaces the session in this process only, if it
   * is still at `next.version - 1`; the next replace writes over the version the table holds.
   * Absent: the caller writes it with replace. docs/acp.md, "One process, one writer".
   */
  hold?(next: CheckoutSession): Promise<boolean>;
  /**
   * Where this process is the only writer: `next` is what every read gets at once, and its write
   * (over `next.version - 1`) follows without being waited for. The write's outcome, or false
   * (nothing done) when the session is not at `next.version - 1` here.
   */
  replaceBehind?(next: CheckoutSession): Promise<boolean> | false;
  /**
   * Once every write started by replaceBehind has landed (or failed), before the store closes:
   * true when every one of them was written (the table holds what was answered).
   */
  settled?(): Promise<boolean>;
}
