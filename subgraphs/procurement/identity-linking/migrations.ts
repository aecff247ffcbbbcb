import type { Migration } from '../../../lib/db/index.ts';

// One statement per migration: migrate() runs each as a prepared statement.
export const identityLinkingMigrations: readonly Migration[] = [
  {
    // oidc-provider's models (clients, grants, codes, refresh tokens, sessions, interactions),
    // one row per model and id as its adapter contract asks (gateway/oauth/adapter.ts).
    id: 'procurement:identity-linking-001-oauth-models',
    sql: `CREATE TABLE oauth_models (
      model text NOT NULL,
      id text NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      uid text,
      expires_at timestamptz,
      consumed_at timestamptz,
      PRIMARY KEY (model, id)
    )`,
  },
  {
    id: 'procurement:identity-linking-002-grant-index',
    sql: 'CREATE INDEX oauth_models_grant ON oauth_models (grant_id)',
  },
  {
    id: 'procurement:identity-linking-003-uid-index',
    sql: 'CREATE INDEX oauth_models_uid ON oauth_models (uid)',
  },
  {
    // A linked platform: the grant and the agent identity it acts as (links.ts).
    id: 'procurement:identity-linking-004-platform-links',
    sql: `CREATE TABLE platform_links (
      grant_id text PRIMARY KEY,
      client_id text NOT NULL,
      client_name text NOT NULL,
      account_id text NOT NULL,
      spiffe_id text NOT NULL,
      agent_id text NOT NULL,
      identity_scopes text[] NOT NULL,
      key_id text NOT NULL,
      identity_name text NOT NULL,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoked_by text
    )`,
  },
  {
    // Revoked grants whose access tokens may still be unexpired: a replica starting reads them.
    id: 'procurement:identity-linking-005-revoked-grants',
    sql: 'CREATE TABLE oauth_revoked_grants (grant_id text PRIMARY KEY, until timestamptz NOT NULL)',
  },
];
