import type { Db } from '../../../lib/db/index.ts';
import type { CloudEvent } from '../../../lib/events/cloudevent.ts';

/**
 * The ACP endpoints of checkout API keys, in the webhook tables: one `acp` row of
 * webhook_endpoints per key that has a webhook, keyed by `api_key_id`, holding a copy of the
 * key's URL and secret (the key is the source: acp-routing.ts brings the row in line). Its
 * deliveries are ordinary rows of webhook_deliveries: the worker, retries, replay and listing
 * are the operators' ones.
 */
export interface AcpEndpointStore {
  /**
   * Creates the key's endpoint, or gives it the key's current URL and secret. A changed URL or
   * secret (setCheckoutWebhook) makes a disabled endpoint active again; the same ones leave it
   * as it is, so an endpoint disabled by a 410 Gone or an operator stays disabled until the
   * platform's webhook is set again.
   */
  upsert(e: {
    apiKeyId: string;
    url: string;
    secret: string;
    eventTypes: readonly string[];
    now: Date;
  }): Promise<void>;
  /** The active endpoint of a key, if any (to disable it when the key is revoked). */
  activeEndpointOf(apiKeyId: string): Promise<string | null>;
  /** One delivery of `payload` (the ACP body) to the key's active endpoint, once per event. */
  enqueue(apiKeyId: string, event: CloudEvent, payload: string, now: Date): Promise<number>;
}

export function sqlAcpEndpointStore(db: Db): AcpEndpointStore {
  return {
    async upsert(e) {
      // Concurrent replicas routing the same event both run this: ON CONFLICT makes the second
      // wait for the first's row, then find nothing to change.
      await db.query(
        `INSERT INTO webhook_endpoints AS w (endpoint_id, url, event_types, description, secret, created_at, scheme, api_key_id)
         VALUES ('whe_' || replace(gen_random_uuid()::text, '-', ''), $2, $3, $4, $5, $6, 'acp', $1)
         ON CONFLICT (api_key_id) DO UPDATE
         SET url = EXCLUDED.url, secret = EXCLUDED.secret, status = 'active', disabled_reason = NULL, disabled_at = NULL
         WHERE (w.url, w.secret) IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.secret)`,
        [
          e.apiKeyId,
          e.url,
          e.eventTypes,
          `ACP order webhooks of checkout API key ${e.apiKeyId}`,
          e.secret,
          e.now.toISOString(),
        ],
      );
    },

    async activeEndpointOf(apiKeyId) {
      const [row] = await db.query<{ endpoint_id: string }>(
        "SELECT endpoint_id FROM webhook_endpoints WHERE api_key_id = $1 AND status = 'active'",
        [apiKeyId],
      );
      return row?.endpoint_id ?? null;
    },

    async enqueue(apiKeyId, event, payload, now) {
      // Every replica routes every event: UNIQUE (endpoint_id, event_id) keeps one delivery.
      const rows = await db.query(
        `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, event_id, event_type, payload, next_attempt_at, created_at)
         SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), endpoint_id, $2, $3, $4, $5, $5
         FROM webhook_endpoints WHERE api_key_id = $1 AND scheme = 'acp' AND status = 'active'
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING delivery_id`,
        [apiKeyId, event.id, event.type, payload, now.toISOString()],
      );
      return rows.length;
    },
  };
}
