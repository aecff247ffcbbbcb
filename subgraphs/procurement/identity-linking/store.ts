import type { Db } from '../../../lib/db/index.ts';
import type { PlatformLink } from './links.ts';

/**
 * Linked platforms and recent grant revocations in the SQL store (PGlite embedded, PostgreSQL
 * distributed), the same SQL on both. Written at consent and revocation, read by the buyer's
 * list and when a token is issued; never on a UCP call (the token carries the identity).
 */
export interface PlatformLinks {
  create(link: PlatformLink): Promise<void>;
  byGrant(grantId: string): Promise<PlatformLink | null>;
  /** Every link, newest first, revoked ones included. */
  list(): Promise<PlatformLink[]>;
  /** Marks the link revoked (the first revocation is kept); true the first time. */
  markRevoked(grantId: string, by: string, atMs: number): Promise<boolean>;
  /** Remembers a revoked grant until its last access token expires. */
  rememberRevoked(grantId: string, untilMs: number): Promise<void>;
  /** Revocations whose tokens may still be alive at `nowMs`. */
  revokedSince(nowMs: number): Promise<{ grantId: string; untilMs: number }[]>;
}

type Time = Date | string | null;
const ms = (t: Time): number | null => (t === null ? null : new Date(t).getTime());

interface Row {
  grant_id: string;
  client_id: string;
  client_name: string;
  account_id: string;
  spiffe_id: string;
  agent_id: string;
  identity_scopes: string[];
  key_id: string;
  identity_name: string;
  scopes: string[];
  created_at: Time;
  revoked_at: Time;
  revoked_by: string | null;
}

const linkOf = (r: Row): PlatformLink => ({
  grantId: r.grant_id,
  clientId: r.client_id,
  clientName: r.client_name,
  accountId: r.account_id,
  identity: {
    spiffeId: r.spiffe_id,
    agentId: r.agent_id,
    scopes: r.identity_scopes,
    keyId: r.key_id,
    name: r.identity_name,
  },
  scopes: r.scopes,
  createdAt: ms(r.created_at) ?? 0,
  revokedAt: ms(r.revoked_at),
  revokedBy: r.revoked_by,
});

export function sqlPlatformLinks(db: Db): PlatformLinks {
  return {
    async create(l) {
      await db.query(
        `INSERT INTO platform_links (grant_id, client_id, client_name, account_id, spiffe_id, agent_id,
           identity_scopes, key_id, identity_name, scopes, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          l.grantId,
          l.clientId,
          l.clientName,
          l.accountId,
          l.identity.spiffeId,
          l.identity.agentId,
          [...l.identity.scopes],
          l.identity.keyId,
          l.identity.name,
          [...l.scopes],
          new Date(l.createdAt).toISOString(),
        ],
      );
    },
    async byGrant(grantId) {
      const rows = await db.query<Row>('SELECT * FROM platform_links WHERE grant_id = $1', [grantId]);
      return rows[0] ? linkOf(rows[0]) : null;
    },
    async list() {
      const rows = await db.query<Row>('SELECT * FROM platform_links ORDER BY created_at DESC, grant_id');
      return rows.map(linkOf);
    },
    async markRevoked(grantId, by, atMs) {
      const rows = await db.query<{ grant_id: string }>(
        `UPDATE platform_links SET revoked_at = $2, revoked_by = $3
         WHERE grant_id = $1 AND revoked_at IS NULL RETURNING grant_id`,
        [grantId, new Date(atMs).toISOString(), by],
      );
      return rows.length > 0;
    },
    async rememberRevoked(grantId, untilMs) {
      await db.query(
        `INSERT INTO oauth_revoked_grants (grant_id, until) VALUES ($1, $2)
         ON CONFLICT (grant_id) DO UPDATE SET until = GREATEST(oauth_revoked_grants.until, EXCLUDED.until)`,
        [grantId, new Date(untilMs).toISOString()],
      );
    },
    async revokedSince(nowMs) {
      const rows = await db.query<{ grant_id: string; until: Time }>(
        'SELECT grant_id, until FROM oauth_revoked_grants WHERE until > $1',
        [new Date(nowMs).toISOString()],
      );
      return rows.map((r) => ({ grantId: r.grant_id, untilMs: ms(r.until) ?? 0 }));
    },
  };
}
