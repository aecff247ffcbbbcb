import type { Migration } from '../../../lib/db/index.ts';

// One statement per migration: migrate() runs each as a prepared statement. The session is one
// JSON document (its shape is the core's, session.ts); the columns beside it are what is
// searched or guarded: the owner, the status, the expiry and the version of a compare-and-set.
export const checkoutMigrations: readonly Migration[] = [
  {
    id: 'checkout:001-sessions',
    sql: `CREATE TABLE IF NOT EXISTS checkout_sessions (
      id text PRIMARY KEY,
      protocol text NOT NULL,
      owner text NOT NULL,
      status text NOT NULL,
      version integer NOT NULL,
      expires_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      doc text NOT NULL CHECK (char_length(doc) <= 1000000)
    )`,
  },
  {
    id: 'checkout:002-sessions-updated',
    sql: 'CREATE INDEX IF NOT EXISTS checkout_sessions_updated ON checkout_sessions (updated_at DESC, id)',
  },
];
