import type { Db } from '../../../lib/db/index.ts';
import type { CloudEvent } from '../../../lib/events/cloudevent.ts';

/**
 * The UCP endpoints, in the webhook tables: one `ucp` row of webhook_endpoints per order webhook
 * URL a platform profile named (`dev.ucp.shopping.order[].config.webhook_url`), keyed by that URL.
 * Its deliveries are ordinary rows of webhook_deliveries: the worker, retries, replay, the
 * private-address guard and listing are the operators' ones. The row has no secret (UCP webhooks
 * are signed with the business's key, ucp-signature.ts).
 */
export interface UcpEndpointStore {
  /**
   * One delivery of `payload` (the UCP order event body) to the endpoint of `url`, once per
   * event, creating the endpoint on first use. An endpoint disabled (a 410 Gone, an operator)
   * before `profileReadAt` is active again: a platform profile read after that still names the
   * URL. Returns the deliveries inserted (0 or 1).
   */
  enqueue(q: {
    url: string;
    profileUrl: string;
    profileReadAt: Date;
    eventTypes: readonly string[];
    event: CloudEvent;
    payload: string;
    now: Date;
  }): Promise<number>;
}

export function sqlUcpEndpointStore(db: Db): UcpEndpointStore {
  return {
    async enqueue(q) {
      // Every replica routes every event: ON CONFLICT keeps one endpoint per URL and one delivery
      // per (endpoint, event).
      await db.query(
        `INSERT INTO webhook_endpoints AS w (endpoint_id, url, event_types, description, secret, created_at, scheme, ucp_webhook_url)
         VALUES ('whe_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, '', $4, 'ucp', $1)
         ON CONFLICT (ucp_webhook_url) DO UPDATE SET status = 'active', disabled_reason = NULL, disabled_at = NULL
         WHERE w.status = 'disabled' AND w.disabled_at < $5`,
        [
          q.url,
          q.eventTypes,
          `UCP order webhooks of ${q.profileUrl}`.slice(0, 500),
          q.now.toISOString(),
          q.profileReadAt.toISOString(),
        ],
      );
      const rows = await db.query(
        `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, event_id, event_type, payload, next_attempt_at, created_at)
         SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), endpoint_id, $2, $3, $4, $5, $5
         FROM webhook_endpoints WHERE ucp_webhook_url = $1 AND scheme = 'ucp' AND status = 'active'
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING delivery_id`,
        [q.url, q.event.id, q.event.type, q.payload, q.now.toISOString()],
      );
      return rows.length;
    },
  };
}
