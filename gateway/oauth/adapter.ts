import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Clock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';

/**
 * oidc-provider's storage on the SQL store (PGlite embedded, PostgreSQL distributed): every
 * model (Client, Grant, AuthorizationCode, RefreshToken, Session, Interaction, …) is a row of
 * `oauth_models` keyed by model and id, so codes, refresh tokens and grants survive a restart
 * and every gateway replica sees the same ones. Access tokens are JWTs (RFC 9068): they are
 * not stored, and are checked without this table (./access-token.ts).
 *
 * A row past `expires_at` is treated as absent; rows are deleted when consumed models are
 * destroyed or their grant revoked, and expired rows by `sweep` (on start).
 */
export function sqlAdapterClass(db: Db, clock: Clock): new (model: string) => Adapter {
  const now = () => new Date(clock.now()).toISOString();
  const one = async (where: string, params: unknown[]): Promise<AdapterPayload | undefined> => {
    const rows = await db.query<{ payload: AdapterPayload; consumed_at: Date | string | null }>(
      `SELECT payload, consumed_at FROM oauth_models
       WHERE ${where} AND (expires_at IS NULL OR expires_at > $${params.length + 1}) LIMIT 1`,
      [...params, now()],
    );
    const r = rows[0];
    if (!r) return undefined;
    const consumed =
      r.consumed_at === null ? undefined : Math.floor(new Date(r.consumed_at).getTime() / 1000);
    return consumed === undefined ? r.payload : { ...r.payload, consumed };
  };

  return class SqlAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const expires = expiresIn ? new Date(clock.now() + expiresIn * 1000).toISOString() : null;
      await db.query(
        `INSERT INTO oauth_models (model, id, payload, grant_id, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
        [this.model, id, JSON.stringify(payload), payload.grantId ?? null, payload.uid ?? null, expires],
      );
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return one('model = $1 AND id = $2', [this.model, id]);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return one('model = $1 AND uid = $2', [this.model, uid]);
    }

    // No device flow: user codes are never issued.
    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await db.query('UPDATE oauth_models SET consumed_at = $3 WHERE model = $1 AND id = $2', [
        this.model,
        id,
        now(),
      ]);
    }

    async destroy(id: string): Promise<void> {
      await db.query('DELETE FROM oauth_models WHERE model = $1 AND id = $2', [this.model, id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.query('DELETE FROM oauth_models WHERE model = $1 AND grant_id = $2', [this.model, grantId]);
    }
  };
}

/** Deletes expired rows (run at start; nothing reads them). */
export async function sweepExpired(db: Db, clock: Clock): Promise<void> {
  await db.query('DELETE FROM oauth_models WHERE expires_at <= $1', [new Date(clock.now()).toISOString()]);
}
