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
  {
    // How a delivery is framed and signed: Standard Webhooks (operator endpoints, the CloudEvent
    // as body) or ACP (an agent platform's order webhook: Merchant-Signature, the ACP Order).
    id: 'procurement:105-webhook-endpoint-scheme',
    sql: `ALTER TABLE webhook_endpoints
      ADD COLUMN scheme text NOT NULL DEFAULT 'standard-webhooks' CHECK (scheme IN ('standard-webhooks', 'acp'))`,
  },
  {
    // An ACP endpoint belongs to one checkout API key (its webhook URL and secret are the key's,
    // docs/webhooks.md "ACP order webhooks"); UNIQUE: one endpoint per key, whichever replica
    // creates it first.
    id: 'procurement:106-webhook-endpoint-api-key',
    sql: `ALTER TABLE webhook_endpoints
      ADD COLUMN api_key_id text UNIQUE,
      ADD CONSTRAINT webhook_endpoints_acp_has_key CHECK ((scheme = 'acp') = (api_key_id IS NOT NULL))`,
  },
  {
    // UCP order webhooks (docs/ucp-webhooks.md): one endpoint per webhook URL a platform profile
    // names, UNIQUE so that replicas routing the same event create one; no secret (signed with
    // the business's key).
    id: 'procurement:107-webhook-endpoint-ucp',
    sql: `ALTER TABLE webhook_endpoints
      DROP CONSTRAINT webhook_endpoints_scheme_check,
      ADD CONSTRAINT webhook_endpoints_scheme_check CHECK (scheme IN ('standard-webhooks', 'acp', 'ucp')),
      ADD COLUMN ucp_webhook_url text UNIQUE,
      ADD CONSTRAINT webhook_endpoints_ucp_has_url CHECK ((scheme = 'ucp') = (ucp_webhook_url IS NOT NULL))`,
  },
];
