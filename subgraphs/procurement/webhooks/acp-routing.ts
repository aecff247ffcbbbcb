import type { CloudEvent } from '../../../lib/events/cloudevent.ts';
import type { CheckoutApiKey, CheckoutApiKeys } from '../api-keys/index.ts';
import { orderIdOfSession } from '../checkout/session.ts';
import type { CheckoutSessionStore } from '../checkout/store.ts';
import type { OrderEventData } from '../outbox/order-events.ts';
import { acpOrderEvent, isAcpOrderEvent } from './acp-order.ts';
import type { AcpEndpointStore } from './acp-store.ts';

export interface AcpRoutingOptions {
  readonly endpoints: AcpEndpointStore;
  readonly keys: Pick<CheckoutApiKeys, 'webhookOf' | 'list'>;
  readonly sessions: Pick<CheckoutSessionStore, 'get'>;
  /** The order event types (every one of them goes to an ACP endpoint). */
  readonly eventTypes: readonly string[];
  /** This system's public origin (permalinks). */
  readonly origin: string;
  /** Disables an endpoint and fails its pending deliveries (the store's disableEndpoint). */
  readonly disable: (endpointId: string, reason: string, now: Date) => Promise<unknown>;
  /**
   * How long a key's sync is trusted by the routing before it syncs again (default 5 s, the
   * key verifier's revocation bound). A change made in this process syncs at once (sync());
   * one made on another replica reaches this one's deliveries within this bound.
   */
  readonly syncTtlMs?: number;
}

export const REVOKED = 'the checkout API key was revoked';

export interface AcpRouting {
  /**
   * Brings a key's ACP endpoint in line with the key: its URL and secret, or disabled once the
   * key is revoked. True when the key has a webhook to deliver to.
   */
  sync(apiKeyId: string, now: Date): Promise<boolean>;
  /** sync for every key that has a webhook (at start: keys set up before this process ran). */
  syncAll(now: Date): Promise<void>;
  /**
   * An order event of a checkout order → one delivery of its ACP body to the webhook of the
   * API key that created the session, and to no one else. 0 for any other event (a /v2 order
   * costs no statement), and for every event while no active key has a webhook (no statement
   * either, but one listing of the keys per syncTtlMs).
   */
  route(event: CloudEvent, now: Date): Promise<number>;
}

export function createAcpRouting(o: AcpRoutingOptions): AcpRouting {
  const ttlMs = o.syncTtlMs ?? 5_000;
  // Each routed event of a busy platform would read the key and write its endpoint row again:
  // a sync is trusted for ttlMs (bounded: keys are few, but never trust a count from outside).
  const synced = new Map<string, { readonly ok: boolean; readonly until: number }>();
  // Whether any active key has a webhook. While none has, no order event goes to a platform,
  // and routing reads nothing: no session, no key (each checkout completion paid both). Trusted
  // for ttlMs, as a sync is: a webhook set through another replica is seen here within that
  // bound, and meanwhile that replica, which knew at once, routes every event (every replica
  // receives each). Unknown (the keys unreadable) routes as if one had.
  let anyWebhook: { readonly yes: boolean; readonly until: number } | undefined;
  let checking: Promise<boolean> | undefined;
  /** Counts syncs: a listing that a sync overtook does not overwrite what the sync learnt. */
  let syncs = 0;
  const hasWebhook = (keys: readonly CheckoutApiKey[]) => keys.some((k) => !k.revokedAt && k.webhook);
  function mayDeliver(now: Date): Promise<boolean> | boolean {
    if (anyWebhook && anyWebhook.until > now.getTime()) return anyWebhook.yes;
    const before = syncs;
    checking ??= o.keys
      .list()
      .then(
        (keys) => {
          const yes = hasWebhook(keys);
          if (syncs !== before) return yes || (anyWebhook?.yes ?? true);
          anyWebhook = { yes, until: now.getTime() + ttlMs };
          return yes;
        },
        () => true,
      )
      .finally(() => {
        checking = undefined;
      });
    return checking;
  }
  async function sync(apiKeyId: string, now: Date): Promise<boolean> {
    const ok = await syncNow(apiKeyId, now);
    if (synced.size >= 10_000) synced.clear();
    synced.set(apiKeyId, { ok, until: now.getTime() + ttlMs });
    // A webhook set here is seen at once; a revocation makes the next event ask again.
    syncs++;
    anyWebhook = ok ? { yes: true, until: now.getTime() + ttlMs } : undefined;
    return ok;
  }

  async function syncNow(apiKeyId: string, now: Date): Promise<boolean> {
    const target = await o.keys.webhookOf(apiKeyId);
    if (!target) {
      // No webhook on an existing endpoint means the key was revoked (a webhook is never unset).
      const endpointId = await o.endpoints.activeEndpointOf(apiKeyId);
      if (endpointId) await o.disable(endpointId, REVOKED, now);
      return false;
    }
    await o.endpoints.upsert({ apiKeyId, ...target, eventTypes: o.eventTypes, now });
    return true;
  }
  /** The key when it has a webhook to deliver to (its sync trusted for ttlMs). */
  async function deliverable(apiKeyId: string, now: Date): Promise<string | undefined> {
    const known = synced.get(apiKeyId);
    const ok = known && known.until > now.getTime() ? known.ok : await sync(apiKeyId, now);
    return ok ? apiKeyId : undefined;
  }

  /**
   * A session's key was revoked (a rotation: the platform's new key has the same identity, see
   * api-keys/store.ts): the platform's orders go to the webhook of its newest active key with
   * the same SPIFFE ID, so an approval decided days later still reaches it.
   */
  async function successorOf(apiKeyId: string, now: Date): Promise<string | undefined> {
    const keys = await o.keys.list();
    const spiffeId = keys.find((k) => k.id === apiKeyId)?.spiffeId;
    if (!spiffeId) return undefined;
    const next = keys
      .filter((k) => k.spiffeId === spiffeId && k.id !== apiKeyId && !k.revokedAt && k.webhook)
      .pop();
    return next ? deliverable(next.id, now) : undefined;
  }

  return {
    sync,
    async syncAll(now) {
      const keys = await o.keys.list();
      for (const key of keys) if (key.webhook) await sync(key.id, now);
      anyWebhook = { yes: hasWebhook(keys), until: now.getTime() + ttlMs };
    },
    async route(event, now) {
      const data = event.data as Partial<OrderEventData> | null;
      const sessionId = data?.checkout_session_id;
      if (typeof sessionId !== 'string' || !isAcpOrderEvent(event.type)) return 0;
      if (!(await mayDeliver(now))) return 0;
      // The session is in the same database (written by the gateway's checkout service): it names
      // the key that created it and the purchase order number the platform paid with.
      const session = await o.sessions.get(sessionId);
      // The session's order by its id (derived from the session's), not by session.orderId: an
      // embedded crash may lose the session's write after its order (cached.ts), and the event
      // can be relayed before the session is mended at start.
      if (!session?.keyId || orderIdOfSession(session.id) !== (data as OrderEventData).order_id) return 0;
      // The key is the source of the URL and secret; syncing here (a no-op statement when nothing
      // changed, at most once per key and syncTtlMs) means a delivery never waits long for a
      // listener that did not run.
      const keyId = (await deliverable(session.keyId, now)) ?? (await successorOf(session.keyId, now));
      if (!keyId) return 0;
      const body = acpOrderEvent(event.type, data as OrderEventData, session, o.origin);
      return o.endpoints.enqueue(keyId, event, JSON.stringify(body), now);
    },
  };
}
