import type { Clock } from '../../../lib/clock.ts';
import type { Db } from '../../../lib/db/index.ts';
import { checkEndpointUrl } from '../webhooks/endpoint-url.ts';
import { ApiKeyConflict, ApiKeyInputInvalid, ApiKeyNotFound } from './errors.ts';
import { hashApiKey, isKeyId, isSecretKeyShaped, newKeyId, newSecretKey } from './key.ts';
import type {
  CheckoutApiKey,
  CheckoutApiKeyInput,
  CheckoutWebhookTarget,
  IssuedCheckoutApiKey,
} from './types.ts';
import { parseKeyInput } from './validate.ts';

/**
 * Checkout API keys in the SQL store (PGlite embedded, Postgres distributed): one adapter, the
 * same SQL on both. The procurement subgraph issues and revokes through it; the gateway verifies
 * through it (gateway/agent/identity/api-key.ts), against the same database.
 */
export interface CheckoutApiKeys {
  /** Validates the input (throws ApiKeyInputInvalid) and stores a new key; the secret is in the reply only. */
  issue(input: CheckoutApiKeyInput, by: string): Promise<IssuedCheckoutApiKey>;
  /** Revokes it: true the first time, false when it already was; throws ApiKeyNotFound. */
  revoke(id: string, by: string): Promise<boolean>;
  /** Every key, oldest first, revoked ones included. */
  list(): Promise<CheckoutApiKey[]>;
  get(id: string): Promise<CheckoutApiKey | null>;
  /** The active key a presented secret key is; null when malformed, unknown or revoked. Never throws on input. */
  verify(presentedKey: string): Promise<CheckoutApiKey | null>;
  /** Where the key's order webhooks go and the secret that signs them; throws on a bad URL, unknown or revoked key. */
  setWebhook(id: string, url: string, secret: string): Promise<CheckoutApiKey>;
  /** The webhook of an active key, secret in clear, for the sender; null when none or revoked. */
  webhookOf(id: string): Promise<CheckoutWebhookTarget | null>;
  /** Called when this instance revokes a key (a verifier in the same process forgets it at once). */
  onRevoked(listener: (id: string) => void): () => void;
  /**
   * Called, and awaited, after this instance set a key's webhook or revoked a key (again on a
   * repeated revocation): the webhook module brings the key's delivery endpoint in line before
   * the operator's reply. A listener's failure fails the call, which can simply be repeated.
   */
  onWebhookChange(listener: (id: string) => Promise<void>): () => void;
}

export interface ApiKeyStoreOptions {
  readonly clock: Clock;
  /** SPIFFE_TRUST_DOMAINS: a key acts as a procurement agent in one of them. */
  readonly trustDomains: readonly string[];
  /** WEBHOOK_ALLOW_PRIVATE_URLS, as for webhook endpoints. */
  readonly allowPrivateUrls: boolean;
  /** UCP_PROFILE_ALLOW_INSECURE: a key may be bound to an http or loopback profile (development, tests). */
  readonly allowInsecureProfiles?: boolean;
}

/** lastUsedAt is kept to the minute: at most one write per key and minute, not one per request. */
const LAST_USED_GRANULARITY_MS = 60_000;

type Time = Date | string | null;
const ms = (t: Time): number | null => (t === null ? null : new Date(t).getTime());

interface Row {
  id: string;
  name: string;
  spiffe_id: string;
  agent_id: string;
  scopes: string[];
  created_at: Time;
  created_by: string;
  revoked_at: Time;
  revoked_by: string | null;
  last_used_at: Time;
  webhook_url: string | null;
  webhook_secret: string | null;
  ucp_profile: string | null;
}

const COLUMNS =
  'id, name, spiffe_id, agent_id, scopes, created_at, created_by, revoked_at, revoked_by, last_used_at, webhook_url, webhook_secret, ucp_profile';

const keyOf = (r: Row): CheckoutApiKey => ({
  id: r.id,
  name: r.name,
  spiffeId: r.spiffe_id,
  agentId: r.agent_id,
  scopes: Object.freeze([...r.scopes]),
  createdAt: ms(r.created_at) as number,
  createdBy: r.created_by,
  revokedAt: ms(r.revoked_at),
  revokedBy: r.revoked_by,
  lastUsedAt: ms(r.last_used_at),
  webhook: r.webhook_url === null ? null : { url: r.webhook_url, secretSet: r.webhook_secret !== null },
  ucpProfile: r.ucp_profile,
});

export function sqlCheckoutApiKeys(db: Db, o: ApiKeyStoreOptions): CheckoutApiKeys {
  const listeners = new Set<(id: string) => void>();
  const webhookListeners = new Set<(id: string) => Promise<void>>();
  const webhookChanged = async (id: string) => {
    for (const l of webhookListeners) await l(id);
  };
  const now = () => new Date(o.clock.now());
  const get = async (id: string): Promise<CheckoutApiKey | null> => {
    if (!isKeyId(id)) return null;
    const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM checkout_api_keys WHERE id = $1`, [id]);
    return row ? keyOf(row) : null;
  };
  const existing = async (id: string): Promise<CheckoutApiKey> => {
    const key = await get(id);
    if (!key) throw new ApiKeyNotFound(`checkout API key ${id.slice(0, 80)} not found`);
    return key;
  };
  return {
    async issue(input, by) {
      const valid = parseKeyInput(input, o.trustDomains, o.allowInsecureProfiles ?? false);
      // A key acts as its SPIFFE ID: sessions, idempotency keys, budget, block and audit are that
      // identity's. Two platforms on one identity would see each other's sessions, so an identity
      // belongs to one platform (its name); a second key of the same name is a rotation.
      const [taken] = await db.query<{ name: string }>(
        'SELECT name FROM checkout_api_keys WHERE spiffe_id = $1 AND revoked_at IS NULL AND name <> $2 LIMIT 1',
        [valid.spiffeId, valid.name],
      );
      if (taken)
        throw new ApiKeyInputInvalid(
          'spiffeId',
          `spiffeId is the identity of the platform ${JSON.stringify(taken.name)}: give each platform its own identity (a key with the same name rotates it)`,
        );
      const id = newKeyId();
      const key = newSecretKey(id);
      const [row] = await db.query<Row>(
        `INSERT INTO checkout_api_keys (id, key_hash, name, spiffe_id, agent_id, scopes, created_at, created_by, ucp_profile)
         VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9) RETURNING ${COLUMNS}`,
        [
          id,
          hashApiKey(key),
          valid.name,
          valid.spiffeId,
          valid.agentId,
          valid.scopes,
          now(),
          by,
          valid.ucpProfile,
        ],
      );
      return { key, apiKey: keyOf(row as Row) };
    },
    async revoke(id, by) {
      if (!isKeyId(id)) throw new ApiKeyNotFound(`checkout API key ${id.slice(0, 80)} not found`);
      const done = await db.query<{ id: string }>(
        'UPDATE checkout_api_keys SET revoked_at = $2, revoked_by = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING id',
        [id, now(), by],
      );
      if (done.length === 0) {
        await existing(id);
        await webhookChanged(id);
        return false;
      }
      for (const l of listeners) l(id);
      await webhookChanged(id);
      return true;
    },
    async list() {
      return (await db.query<Row>(`SELECT ${COLUMNS} FROM checkout_api_keys ORDER BY seq`)).map(keyOf);
    },
    get,
    async verify(presentedKey) {
      if (typeof presentedKey !== 'string' || !isSecretKeyShaped(presentedKey)) return null;
      // Found by the hash through a unique index, never compared with a stored secret: a
      // lookup's timing depends on the hash of what was sent, which tells an attacker nothing
      // about any key's secret, so no constant-time comparison is needed.
      const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM checkout_api_keys WHERE key_hash = $1`, [
        hashApiKey(presentedKey),
      ]);
      if (!row || row.revoked_at !== null) return null;
      const at = o.clock.now();
      const last = ms(row.last_used_at);
      if (last === null || at - last >= LAST_USED_GRANULARITY_MS) {
        await db.query(
          'UPDATE checkout_api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)',
          [row.id, new Date(at)],
        );
        row.last_used_at = new Date(at);
      }
      return keyOf(row);
    },
    async setWebhook(id, url, secret) {
      const checked = checkEndpointUrl(url, o.allowPrivateUrls);
      if (!checked.ok) throw new ApiKeyInputInvalid('url', `url ${checked.reason}`);
      if (!secret) throw new ApiKeyInputInvalid('secret', 'a webhook needs a signing secret');
      const [row] = await db.query<Row>(
        `UPDATE checkout_api_keys SET webhook_url = $2, webhook_secret = $3
         WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
        [isKeyId(id) ? id : '', checked.url, secret],
      );
      if (row) {
        await webhookChanged(row.id);
        return keyOf(row);
      }
      await existing(id);
      throw new ApiKeyConflict(`checkout API key ${id} is revoked`);
    },
    async webhookOf(id) {
      if (!isKeyId(id)) return null;
      const [row] = await db.query<{ webhook_url: string; webhook_secret: string }>(
        `SELECT webhook_url, webhook_secret FROM checkout_api_keys
         WHERE id = $1 AND revoked_at IS NULL AND webhook_url IS NOT NULL AND webhook_secret IS NOT NULL`,
        [id],
      );
      return row ? { url: row.webhook_url, secret: row.webhook_secret } : null;
    },
    onRevoked(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onWebhookChange(listener) {
      webhookListeners.add(listener);
      return () => webhookListeners.delete(listener);
    },
  };
}
