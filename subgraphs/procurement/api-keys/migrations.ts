import type { Migration } from '../../../lib/db/index.ts';

// One statement per migration: migrate() runs each as a prepared statement.
export const apiKeyMigrations: readonly Migration[] = [
  {
    // key_hash: SHA-256 (hex) of the whole secret key, the only form of it kept (key.ts says
    // why a fast hash). webhook_secret: the Standard Webhooks signing secret in clear, as
    // webhook_endpoints.secret keeps it: an HMAC is made with the secret itself.
    id: 'procurement:api-keys-001-checkout-api-keys',
    sql: `CREATE TABLE checkout_api_keys (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE CHECK (id ~ '^ak_[0-9a-f]{24}$'),
      key_hash text NOT NULL UNIQUE CHECK (char_length(key_hash) = 64),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      spiffe_id text NOT NULL CHECK (char_length(spiffe_id) <= 2048),
      agent_id text NOT NULL CHECK (char_length(agent_id) <= 64),
      scopes text[] NOT NULL CHECK (cardinality(scopes) >= 1),
      created_at timestamptz NOT NULL,
      created_by text NOT NULL,
      revoked_at timestamptz,
      revoked_by text,
      last_used_at timestamptz,
      webhook_url text CHECK (char_length(webhook_url) <= 2048),
      webhook_secret text
    )`,
  },
  {
    // The UCP platform profile (URL or origin) the key may act for (profile-binding.ts).
    id: 'procurement:api-keys-002-ucp-profile',
    sql: 'ALTER TABLE checkout_api_keys ADD COLUMN ucp_profile text CHECK (char_length(ucp_profile) <= 2048)',
  },
];
