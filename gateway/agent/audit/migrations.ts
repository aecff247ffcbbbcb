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
];
