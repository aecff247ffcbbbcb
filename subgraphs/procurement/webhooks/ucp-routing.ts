import type { Db, Migration } from '../../../lib/db/index.ts';
import { type CloudEvent, EventTypes } from '../../../lib/events/cloudevent.ts';
import { type CheckoutSession, orderIdOfSession } from '../checkout/session.ts';
import type { CheckoutSessionStore } from '../checkout/store.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import type { OrderEventData } from '../outbox/order-events.ts';
import { renderUcpOrder, shipmentsOf } from './ucp-order.ts';
import type { UcpEndpointStore } from './ucp-store.ts';

/**
 * UCP order events (order.md, "Events"): when a UCP checkout's order is created or changes, the
 * platform receives the full order at the webhook URL its profile's order capability names
 * (kept on the session at create: `channel.orderWebhookUrl`). The order exists for the platform
 * from the moment its checkout is `completed`:
 *
 * | order event | sent |
 * |---|---|
 * | OrderPlaced (stored APPROVED) | yes: "Order created" |
 * | OrderApproved (a pending order's last approval; its checkout completes now) | yes: "Order created" |
 * | OrderShipped (the merchant recorded a shipment) | yes |
 * | OrderCancelled of an order that was confirmed | yes (a `cancellation` adjustment) |
 * | OrderApprovalRequested, OrderRejected, OrderExpired, OrderCancelled of a pending order | no: the checkout was never completed (it is `requires_escalation`, then canceled), so there is no order for the platform |
 *
 * The body is the order as it is when the event is routed (the "current-state snapshot"), with
 * order.md's example's `event_id` (the event's id, = Webhook-Id) and `created_time` (when the
 * event occurred). It is built once and stored: every attempt and replay sends the same bytes.
 */

/**
 * A partial index of the UCP sessions: "does any exist?" (the routing's gate, asked every
 * checkTtlMs until one does) is one index probe instead of a scan of every ACP session, and ACP
 * inserts do not touch it. Run after the checkout migrations (the table is theirs).
 */
export const ucpRoutingMigrations: readonly Migration[] = [
  {
    id: 'procurement:201-checkout-sessions-ucp',
    sql: "CREATE INDEX IF NOT EXISTS checkout_sessions_ucp ON checkout_sessions (id) WHERE protocol = 'ucp'",
  },
];

export const UCP_ORDER_EVENT_TYPES: ReadonlySet<string> = new Set([
  EventTypes.OrderPlaced,
  EventTypes.OrderApproved,
  EventTypes.OrderCancelled,
  EventTypes.OrderShipped,
]);

/** What the routing reads of an order: its current state and shipments. */
export interface UcpOrderReader {
  get(orderId: string): Promise<PurchaseOrder | null>;
}

export interface UcpRoutingOptions {
  readonly sessions: Pick<CheckoutSessionStore, 'get'>;
  readonly orders: UcpOrderReader;
  readonly endpoints: UcpEndpointStore;
  /** The store, to learn cheaply whether any UCP session exists (until one does). */
  readonly db: Db;
  /** The order event types (the endpoint row's subscription; informational). */
  readonly eventTypes: readonly string[];
  /** The UCP REST endpoint (permalinks). */
  readonly restEndpoint: string;
  /** How long "no UCP session exists yet" is trusted (default 5 s). */
  readonly checkTtlMs?: number;
}

/** The platform's order webhook URL on a UCP session (its profile's order capability config), if any. */
export function orderWebhookUrlOf(s: CheckoutSession): string | undefined {
  const url = s.channel?.orderWebhookUrl;
  return typeof url === 'string' && url.length > 0 ? url : undefined;
}

/** An order its platform was told of: approved on creation, or approved later (a decision). */
const wasConfirmed = (o: PurchaseOrder): boolean => o.approvalsRequired === 0 || o.decidedAt !== null;

export interface UcpRouting {
  /** An order event → one delivery of the UCP order to its platform's webhook (0 for anything else). */
  route(event: CloudEvent, now: Date): Promise<number>;
}

export function createUcpRouting(o: UcpRoutingOptions): UcpRouting {
  const ttlMs = o.checkTtlMs ?? 5_000;
  // Until a UCP session exists, an order event costs no session read: every ACP checkout order
  // would pay one otherwise. Once one exists this stays true (sessions are not deleted).
  let anyUcp: { readonly yes: boolean; readonly until: number } | undefined;
  async function mayDeliver(now: Date): Promise<boolean> {
    if (anyUcp && (anyUcp.yes || anyUcp.until > now.getTime())) return anyUcp.yes;
    try {
      const rows = await o.db.query("SELECT 1 FROM checkout_sessions WHERE protocol = 'ucp' LIMIT 1");
      anyUcp = { yes: rows.length > 0, until: now.getTime() + ttlMs };
      return anyUcp.yes;
    } catch {
      return true;
    }
  }
  return {
    async route(event, now) {
      const data = event.data as Partial<OrderEventData> | null;
      const sessionId = data?.checkout_session_id;
      if (typeof sessionId !== 'string' || !UCP_ORDER_EVENT_TYPES.has(event.type)) return 0;
      if (!(await mayDeliver(now))) return 0;
      const session = await o.sessions.get(sessionId);
      // By the order id derived from the session's (as acp-routing.ts does, and why).
      const orderId = orderIdOfSession(sessionId);
      if (session?.protocol !== 'ucp' || orderId !== data?.order_id) return 0;
      const url = orderWebhookUrlOf(session);
      if (!url) return 0;
      const order = await o.orders.get(orderId);
      if (!order) return 0;
      if (event.type === EventTypes.OrderPlaced && data?.status !== 'APPROVED') return 0;
      if (event.type === EventTypes.OrderCancelled && !wasConfirmed(order)) return 0;
      const body = {
        ...renderUcpOrder({ order, session, restEndpoint: o.restEndpoint, shipments: shipmentsOf(order) }),
        event_id: event.id,
        created_time: event.time,
      };
      return o.endpoints.enqueue({
        url,
        profileUrl: session.channel?.profileUrl ?? 'an unknown platform',
        profileReadAt: new Date(session.createdAt),
        eventTypes: o.eventTypes,
        event,
        payload: JSON.stringify(body),
        now,
      });
    },
  };
}
