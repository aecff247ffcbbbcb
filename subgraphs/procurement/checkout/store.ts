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
   * Writes `next` only if the stored session is still at `next.version - 1`; false (nothing
   * written) when another change came first.
   */
  replace(next: CheckoutSession): Promise<boolean>;
  /** Sessions by status, newest first (the console's Checkout page); at most `limit`. */
  list(q: {
    readonly statuses?: readonly SessionStatus[];
    readonly limit: number;
  }): Promise<CheckoutSession[]>;
}
