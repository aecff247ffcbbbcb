import type { Migration } from '../../../lib/db/index.ts';

export const auditMigrations: readonly Migration[] = [
  {
    id: 'agent-gateway:001-audit-log',
    sql: `CREATE TABLE agent_audit_log (
      seq bigint PRIMARY KEY,
      at bigint NOT NULL,
      trace_id text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      status integer NOT NULL,
      duration_ms double precision NOT NULL,
      identity text,
      reason text NOT NULL,
      prev_hash text NOT NULL,
      hash text NOT NULL
    )`,
  },
  {
    // Issue 13: links are HMACs under a key held outside the database; this names the key.
    // Entries from before (NULL) are plain SHA-256 links, accepted up to the legacy checkpoint.
    id: 'agent-gateway:002-audit-link-key',
    sql: 'ALTER TABLE agent_audit_log ADD COLUMN key_id text',
  },
  {
    // Issue 14: the operator API searches entries by order and by identity, newest first.
    // One statement per migration: migrate() runs each as a prepared statement.
    id: 'agent-gateway:003-audit-order-id',
    sql: 'ALTER TABLE agent_audit_log ADD COLUMN order_id text',
  },
  {
    id: 'agent-gateway:004-audit-by-order',
    sql: 'CREATE INDEX agent_audit_log_order ON agent_audit_log (order_id, seq) WHERE order_id IS NOT NULL',
  },
  {
    id: 'agent-gateway:005-audit-by-identity',
    sql: 'CREATE INDEX agent_audit_log_identity ON agent_audit_log (identity, seq)',
  },
];
