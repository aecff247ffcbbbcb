import type { Migration } from '../../../lib/db/index.ts';

// One statement per migration: migrate() runs each as a prepared statement.
export const webhookMigrations: readonly Migration[] = [
  {
    id: 'procurement:101-webhook-endpoints',
    sql: `CREATE TABLE webhook_endpoints (
      seq bigserial PRIMARY KEY,
      endpoint_id text NOT NULL UNIQUE,
      url text NOT NULL CHECK (char_length(url) <= 2048),
      event_types text[] NOT NULL CHECK (cardinality(event_types) >= 1),
      description text CHECK (char_length(description) <= 500),
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
      disabled_reason text,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL
    )`,
  },
  {
    // UNIQUE (endpoint_id, event_id): every procurement replica receives every event and
    // inserts its deliveries; the first insert wins, the others do nothing.
    id: 'procurement:102-webhook-deliveries',
    sql: `CREATE TABLE webhook_deliveries (
      seq bigserial PRIMARY KEY,
      delivery_id text NOT NULL UNIQUE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (endpoint_id),
      event_id text NOT NULL,
      event_type text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      claims integer NOT NULL DEFAULT 0,
      replays integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      UNIQUE (endpoint_id, event_id)
    )`,
  },
  {
    id: 'procurement:103-webhook-deliveries-due',
    sql: "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
  },
  {
    id: 'procurement:104-webhook-deliveries-by-endpoint',
    sql: 'CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, seq DESC)',
  },
];
