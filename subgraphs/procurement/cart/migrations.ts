import type { Migration } from '../../../lib/db/index.ts';

// One statement per migration (migrate() runs each as a prepared statement). The cart is one
// JSON document (./cart.ts), as a checkout session is; beside it the columns that are searched or
// guarded: the owner, the expiry, and the version of a compare-and-set.
export const cartMigrations: readonly Migration[] = [
  {
    id: 'cart:001-carts',
    sql: `CREATE TABLE IF NOT EXISTS carts (
      id text PRIMARY KEY,
      protocol text NOT NULL,
      owner text NOT NULL,
      version integer NOT NULL,
      expires_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      doc text NOT NULL CHECK (char_length(doc) <= 1000000)
    )`,
  },
  {
    id: 'cart:002-carts-updated',
    sql: 'CREATE INDEX IF NOT EXISTS carts_updated ON carts (updated_at DESC, id)',
  },
  {
    id: 'cart:003-carts-expires',
    sql: 'CREATE INDEX IF NOT EXISTS carts_expires ON carts (expires_at)',
  },
];
