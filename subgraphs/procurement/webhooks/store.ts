import type { Db } from '../../../lib/db/index.ts';
import { vacuumAfterChanges } from '../../../lib/db/upkeep.ts';
import type { CloudEvent } from '../../../lib/events/cloudevent.ts';
import { WebhookConflict, WebhookNotFound } from './errors.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryStatus,
  EndpointScheme,
  EndpointStatus,
  WebhookDelivery,
  WebhookEndpoint,
} from './types.ts';

/**
 * Endpoints and deliveries in the SQL store (PGlite embedded, Postgres distributed): one
 * adapter, because the claim relies on row locks (`FOR UPDATE SKIP LOCKED`) that only the
 * database shared by every replica can give. Times are the caller's clock, passed in.
 */
export interface WebhookStore {
  /** Operators' endpoints (the ACP endpoints of checkout API keys do not count). */
  countEndpoints(): Promise<number>;
  insertEndpoint(e: NewEndpoint): Promise<WebhookEndpoint>;
  /** The first `limit` operator endpoints, and every ACP (per key) and UCP (per URL) endpoint; oldest first. */
  listEndpoints(limit: number): Promise<WebhookEndpoint[]>;
  /** Disables it and fails its pending deliveries; throws WebhookNotFound. */
  disableEndpoint(endpointId: string, reason: string, now: Date): Promise<WebhookEndpoint>;
  /**
   * New current secret; the old one keeps signing until `graceUntil`. Throws on unknown, disabled
   * or ACP (its secret is the key's, set with setCheckoutWebhook).
   */
  rotateSecret(endpointId: string, secret: string, graceUntil: Date): Promise<WebhookEndpoint>;
  /**
   * A delivery per active operator endpoint subscribed to the event's type, once per (endpoint,
   * event). ACP endpoints get theirs by routing (acp-store.ts).
   */
  enqueue(event: CloudEvent, now: Date): Promise<number>;
  /** Claims up to `limit` due deliveries: none is due again before `leaseUntil`. */
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt's outcome unless a later claim took the delivery meanwhile. */
  record(d: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<void>;
  /** When the earliest pending delivery is due (null: none pending). */
  nextDueAt(): Promise<Date | null>;
  listDeliveries(q: {
    endpointId: string;
    status?: DeliveryStatus;
    limit: number;
  }): Promise<WebhookDelivery[]>;
  /** Makes a delivered or failed delivery pending again with a fresh attempt budget. */
  replay(deliveryId: string, now: Date): Promise<WebhookDelivery>;
  /** Deletes up to `limit` delivered or failed deliveries created before `before`; returns how many. */
  prune(before: Date, limit: number): Promise<number>;
}

export interface NewEndpoint {
  endpointId: string;
  url: string;
  eventTypes: readonly string[];
  description: string | null;
  secret: string;
  createdAt: Date;
}

type Time = Date | string | null;
const iso = (t: Time): string | null => (t === null ? null : new Date(t).toISOString());

interface EndpointRow {
  endpoint_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: Time;
  created_at: Time;
  scheme: EndpointScheme;
  api_key_id: string | null;
}

const endpointOf = (r: EndpointRow): WebhookEndpoint => ({
  endpointId: r.endpoint_id,
  url: r.url,
  eventTypes: r.event_types,
  description: r.description,
  status: r.status,
  disabledReason: r.disabled_reason,
  disabledAt: iso(r.disabled_at),
  createdAt: iso(r.created_at) as string,
  scheme: r.scheme,
  apiKeyId: r.api_key_id,
});

interface DeliveryRow {
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  replays: number;
  next_attempt_at: Time;
  last_attempt_at: Time;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Time;
  created_at: Time;
}

const deliveryOf = (r: DeliveryRow): WebhookDelivery => ({
  deliveryId: r.delivery_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  status: r.status,
  attempts: Number(r.attempts),
  replays: Number(r.replays),
  nextAttemptAt: iso(r.next_attempt_at),
  lastAttemptAt: iso(r.last_attempt_at),
  lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
  lastError: r.last_error,
  deliveredAt: iso(r.delivered_at),
  createdAt: iso(r.created_at) as string,
});

const ENDPOINT_COLUMNS =
  'endpoint_id, url, event_types, description, status, disabled_reason, disabled_at, created_at, scheme, api_key_id';
const DELIVERY_COLUMNS =
  'delivery_id, endpoint_id, event_id, event_type, status, attempts, replays, next_attempt_at, last_attempt_at, last_status_code, last_error, delivered_at, created_at';
/** Error texts are the receiver's or the network's words: kept short in the table. */
const MAX_ERROR = 500;

export function sqlWebhookStore(db: Db): WebhookStore {
  // Each claim and outcome leaves a dead version: on PGlite the due-index scan would read them all.
  const changed = vacuumAfterChanges(db, 'webhook_deliveries');
  const one = <R>(rows: R[], what: string): R => {
    const row = rows[0];
    if (!row) throw new WebhookNotFound(`${what} not found`);
    return row;
  };
  return {
    async countEndpoints() {
      const [row] = await db.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM webhook_endpoints WHERE scheme = 'standard-webhooks'",
      );
      return Number(row?.n ?? 0);
    },

    async insertEndpoint(e) {
      const rows = await db.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (endpoint_id, url, event_types, description, secret, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ENDPOINT_COLUMNS}`,
        [e.endpointId, e.url, e.eventTypes, e.description, e.secret, e.createdAt.toISOString()],
      );
      return endpointOf(one(rows, 'endpoint'));
    },

    async listEndpoints(limit) {
      const rows = await db.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
         WHERE scheme <> 'standard-webhooks' OR seq IN (
           SELECT seq FROM webhook_endpoints WHERE scheme = 'standard-webhooks' ORDER BY seq LIMIT $1
         ) ORDER BY seq`,
        [limit],
      );
      return rows.map(endpointOf);
    },

    disableEndpoint: (endpointId, reason, now) =>
      db.transaction(async (tx) => {
        const rows = await tx.query<EndpointRow>(
          `UPDATE webhook_endpoints
           SET status = 'disabled', disabled_reason = coalesce(disabled_reason, $2), disabled_at = coalesce(disabled_at, $3)
           WHERE endpoint_id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
          [endpointId, reason, now.toISOString()],
        );
        const endpoint = endpointOf(one(rows, `endpoint ${endpointId}`));
        await tx.query(
          `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = $2
           WHERE endpoint_id = $1 AND status = 'pending'`,
          [endpointId, `endpoint disabled: ${reason}`.slice(0, MAX_ERROR)],
        );
        return endpoint;
      }),

    async rotateSecret(endpointId, secret, graceUntil) {
      const rows = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints
         SET previous_secret = secret, previous_secret_until = $3, secret = $2
         WHERE endpoint_id = $1 AND status = 'active' AND scheme = 'standard-webhooks' RETURNING ${ENDPOINT_COLUMNS}`,
        [endpointId, secret, graceUntil.toISOString()],
      );
      if (rows[0]) return endpointOf(rows[0]);
      const [found] = await db.query<{ api_key_id: string | null }>(
        'SELECT api_key_id FROM webhook_endpoints WHERE endpoint_id = $1',
        [endpointId],
      );
      if (!found) throw new WebhookNotFound(`endpoint ${endpointId} not found`);
      if (found.api_key_id)
        throw new WebhookConflict(
          `endpoint ${endpointId} is the ACP webhook of checkout API key ${found.api_key_id}: set a new secret with setCheckoutWebhook`,
        );
      throw new WebhookConflict(`endpoint ${endpointId} is disabled`);
    },

    async enqueue(event, now) {
      // The CloudEvent is stored as the exact JSON text sent: every attempt and every replay
      // sends the same bytes, so the receiver sees one message however often it arrives.
      const rows = await db.query(
        `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, event_id, event_type, payload, next_attempt_at, created_at)
         SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), endpoint_id, $1, $2, $3, $4, $4
         FROM webhook_endpoints WHERE status = 'active' AND scheme = 'standard-webhooks' AND $2 = ANY (event_types)
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING delivery_id`,
        [event.id, event.type, JSON.stringify(event), now.toISOString()],
      );
      return rows.length;
    },

    async claimDue(now, leaseUntil, limit) {
      // SKIP LOCKED: a worker passes over the rows another worker is claiming right now; the
      // claim then pushes next_attempt_at to the lease's end, so no other worker finds the
      // row due while this attempt runs (the lease outlasts the attempt's timeout).
      const rows = await db.query<{
        delivery_id: string;
        endpoint_id: string;
        event_id: string;
        payload: string;
        attempts: number;
        claims: number;
        url: string;
        secret: string;
        previous_secret: string | null;
        scheme: EndpointScheme;
        created_at: Time;
      }>(
        `WITH due AS (
           SELECT seq FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= $1
           ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries d
         SET attempts = d.attempts + 1, claims = d.claims + 1, next_attempt_at = $2, last_attempt_at = $1
         FROM due, webhook_endpoints e
         WHERE d.seq = due.seq AND e.endpoint_id = d.endpoint_id
         RETURNING d.delivery_id, d.endpoint_id, d.event_id, d.payload, d.attempts, d.claims, d.created_at, e.url, e.secret, e.scheme,
           CASE WHEN e.previous_secret_until > $1 THEN e.previous_secret END AS previous_secret`,
        [now.toISOString(), leaseUntil.toISOString(), limit],
      );
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        endpointId: r.endpoint_id,
        eventId: r.event_id,
        payload: r.payload,
        attempt: Number(r.attempts),
        createdAt: new Date(iso(r.created_at) as string),
        claim: Number(r.claims),
        url: r.url,
        secrets: r.previous_secret ? [r.secret, r.previous_secret] : [r.secret],
        scheme: r.scheme,
      }));
    },

    async record(d, outcome, now) {
      const fence = 'WHERE delivery_id = $1 AND claims = $2 AND status = $3';
      const base = [d.deliveryId, d.claim, 'pending'];
      switch (outcome.kind) {
        case 'delivered':
          await db.query(
            `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $4, next_attempt_at = NULL,
             last_status_code = $5, last_error = NULL ${fence}`,
            [...base, now.toISOString(), outcome.statusCode],
          );
          break;
        case 'retry':
          await db.query(
            `UPDATE webhook_deliveries SET next_attempt_at = $4, last_status_code = $5, last_error = $6 ${fence}`,
            [...base, outcome.at.toISOString(), outcome.statusCode, outcome.error.slice(0, MAX_ERROR)],
          );
          break;
        case 'failed':
          await db.query(
            `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_status_code = $4,
             last_error = $5 ${fence}`,
            [...base, outcome.statusCode, outcome.error.slice(0, MAX_ERROR)],
          );
          break;
        case 'gone':
          await db.query(
            `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_status_code = 410,
             last_error = 'the receiver answered 410 Gone' ${fence}`,
            base,
          );
          break;
      }
      // The claim's update and this one.
      await changed(2);
    },

    async nextDueAt() {
      const [row] = await db.query<{ at: Time }>(
        "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'",
      );
      return row?.at ? new Date(row.at) : null;
    },

    async listDeliveries({ endpointId, status, limit }) {
      const rows = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
         WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY seq DESC LIMIT $3`,
        [endpointId, status ?? null, limit],
      );
      if (rows.length === 0) await exists(db, endpointId);
      return rows.map(deliveryOf);
    },

    async replay(deliveryId, now) {
      const rows = await db.query<DeliveryRow>(
        `UPDATE webhook_deliveries d
         SET status = 'pending', attempts = 0, replays = d.replays + 1, next_attempt_at = $2,
           delivered_at = NULL, last_error = NULL, last_status_code = NULL
         FROM webhook_endpoints e
         WHERE d.delivery_id = $1 AND d.status <> 'pending' AND e.endpoint_id = d.endpoint_id AND e.status = 'active'
         RETURNING ${DELIVERY_COLUMNS.split(', ')
           .map((c) => `d.${c}`)
           .join(', ')}`,
        [deliveryId, now.toISOString()],
      );
      if (rows[0]) return deliveryOf(rows[0]);
      const [found] = await db.query<{ status: DeliveryStatus; endpoint_status: EndpointStatus }>(
        `SELECT d.status, e.status AS endpoint_status FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id WHERE d.delivery_id = $1`,
        [deliveryId],
      );
      if (!found) throw new WebhookNotFound(`delivery ${deliveryId} not found`);
      if (found.endpoint_status !== 'active')
        throw new WebhookConflict(`delivery ${deliveryId} belongs to a disabled endpoint`);
      throw new WebhookConflict(`delivery ${deliveryId} is still pending: it will be attempted anyway`);
    },

    async prune(before, limit) {
      const rows = await db.query(
        `DELETE FROM webhook_deliveries WHERE seq IN (
           SELECT seq FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 ORDER BY seq LIMIT $2
         ) RETURNING seq`,
        [before.toISOString(), limit],
      );
      await changed(rows.length);
      return rows.length;
    },
  };
}

async function exists(db: Db, endpointId: string): Promise<void> {
  const rows = await db.query('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1', [endpointId]);
  if (rows.length === 0) throw new WebhookNotFound(`endpoint ${endpointId} not found`);
}
