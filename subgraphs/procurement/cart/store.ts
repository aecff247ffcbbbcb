import type { Cart } from './cart.ts';

/**
 * Where carts live: a table of their own beside the checkout sessions (PGlite embedded,
 * PostgreSQL distributed; ./sql.ts), so any gateway replica serves any step of a cart.
 */
export interface CartStore {
  /** Stores a new cart (version 0); false when the id exists already. */
  insert(c: Cart): Promise<boolean>;
  get(id: string): Promise<Cart | null>;
  /** Writes `next` only if the stored cart is still at `next.version - 1`; false when another change came first. */
  replace(next: Cart): Promise<boolean>;
  /** Deletes the cart if it is still at `version`; false when it changed or is gone. */
  delete(id: string, version: number): Promise<boolean>;
  /** Carts not expired at `nowMs`, newest first (the console); at most `limit`. */
  list(q: { readonly nowMs: number; readonly limit: number }): Promise<Cart[]>;
  /** Deletes the carts expired before `nowMs`; how many. */
  purgeExpired(nowMs: number): Promise<number>;
}
