import type { Migration } from '../../../lib/db/index.ts';

/** The path of the warm-up's reserved identity (gateway/agent/rehearsal.ts), its sessions' owner's end. */
export const REHEARSAL_OWNER_SUFFIX = '/ns/ai/sa/procurement-agent/warm-up';

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
  {
    // The warm-up's rehearsed sessions (gateway/agent/rehearsal.ts) that a crash during a
    // warm-up left are found at the next start without reading the table: a partial index holds
    // only them, so no other session's write maintains it (sql.ts, removeRehearsedBefore).
    id: 'checkout:003-sessions-rehearsed',
    sql: `CREATE INDEX IF NOT EXISTS checkout_sessions_rehearsed ON checkout_sessions (updated_at)
      WHERE owner LIKE '%${REHEARSAL_OWNER_SUFFIX}'`,
  },
];
