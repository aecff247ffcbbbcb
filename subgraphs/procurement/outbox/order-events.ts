import { randomUUID } from 'node:crypto';
import { type CloudEvent, EventTypes } from '../../../lib/events/cloudevent.ts';
import { tracing } from '../../../lib/telemetry/state.ts';
import type { UsdAmount } from '../contract/types.ts';
import type { BuyerConsent } from '../domain/buyer-consent.ts';
import type { OrderStatus, PurchaseOrder } from '../domain/purchase-order.ts';

/** CloudEvents `source` of the order events, whichever process relays them. */
export const ORDER_EVENT_SOURCE = '/agent-commerce/procurement';

export type OrderEventType =
  | typeof EventTypes.OrderPlaced
  | typeof EventTypes.OrderCancelled
  | typeof EventTypes.OrderApprovalRequested
  | typeof EventTypes.OrderApproved
  | typeof EventTypes.OrderRejected
  | typeof EventTypes.OrderExpired
  | typeof EventTypes.OrderShipped;

/**
 * `data` of OrderPlaced and OrderCancelled (schemas/events/order-*.json): the order in its REST
 * shape, snake_case, plus its owner and line (a checkout order: its lines, total and checkout
 * session too). `allocated_budget` is exact decimal text: event consumers in any language read
 * it without a double in between.
 */
export interface OrderEventData {
  readonly order_id: string;
  readonly status: OrderStatus;
  readonly spiffe_id: string;
  readonly agent_id: string;
  readonly sku: string;
  readonly quantity: number;
  readonly allocated_budget: UsdAmount;
  /** Unix seconds, fractional. */
  readonly processed_at: number;
  /** Unix seconds, fractional; null for OrderPlaced. */
  readonly cancelled_at: number | null;
  /** A checkout order's lines (absent for a /v2 order, whose one line is sku × quantity). */
  readonly lines?: readonly OrderLineEventData[];
  /** A checkout order's total, exact decimal text with two decimals ("12.50"). */
  readonly total?: string;
  /** The ACP checkout session a checkout order completed, when it has one. */
  readonly checkout_session_id?: string;
  /**
   * The buyer's consent choices given with a checkout order (UCP's buyer consent extension:
   * analytics, preferences, marketing, sale_of_data), when the platform gave any.
   */
  readonly buyer_consent?: BuyerConsent;
}

/** One line of a checkout order in event data: amounts as exact decimal text ("12.50"). */
export interface OrderLineEventData {
  readonly sku: string;
  readonly quantity: number;
  readonly unit_price: string;
  readonly discount: string;
  readonly line_total: string;
}

/**
 * `data` of the approval events (schemas/events/order-approval.json): the order's fields as
 * above plus where its approval stands. Kept apart so OrderPlaced and OrderCancelled keep
 * exactly their documented shape.
 */
export interface OrderApprovalEventData extends OrderEventData {
  readonly approvals_required: number;
  readonly approvals: readonly { operator: string; at: number; note: string | null }[];
  /** RFC 3339 UTC: when the pending order expires (or expired). */
  readonly expires_at: string | null;
  /** Unix seconds of the decision; null while pending. */
  readonly decided_at: number | null;
  /** The operator who decided, `system` for an expiry; null while pending. */
  readonly decided_by: string | null;
  readonly decision_reason: string | null;
}

/** `data` of OrderShipped (schemas/events/order-shipped.json): the order's fields and the shipment recorded. */
export interface OrderShippedEventData extends OrderEventData {
  readonly shipment: {
    readonly shipment_id: string;
    readonly at: number;
    readonly tracking_number: string;
    readonly carrier: string | null;
    readonly tracking_url: string | null;
    readonly lines: readonly { readonly line: number; readonly quantity: number }[];
  };
}

/** One outbox row: the event as stored in the order's transaction, relayed later. */
export interface OutboxEvent {
  /** The CloudEvent id: fixed when the row is written, so a re-relay carries the same id. */
  readonly id: string;
  readonly type: OrderEventType;
  readonly subject: string;
  /** ISO 8601: when the change happened (the commit's time, not the relay's). */
  readonly time: string;
  readonly data: OrderEventData | OrderApprovalEventData | OrderShippedEventData;
  /**
   * The W3C trace context of the request that made the change (tracing on only), stored with
   * the row so the event relayed later still continues that request's trace.
   */
  readonly traceparent?: string;
  readonly tracestate?: string;
}

export const orderEventData = (o: PurchaseOrder): OrderEventData => ({
  order_id: o.orderId,
  status: o.status,
  spiffe_id: o.spiffeId,
  agent_id: o.agentId,
  sku: o.sku,
  quantity: o.quantity,
  allocated_budget: o.allocatedBudget,
  processed_at: o.processedAt,
  cancelled_at: o.cancelledAt,
  ...(o.lines === null
    ? {}
    : {
        lines: o.lines.map((l) => ({
          sku: l.sku,
          quantity: l.quantity,
          unit_price: l.unitPrice,
          discount: l.discount,
          line_total: l.lineTotal,
        })),
      }),
  ...(o.total === null ? {} : { total: o.total }),
  ...(o.checkoutSessionId === null ? {} : { checkout_session_id: o.checkoutSessionId }),
  ...(o.buyerConsent ? { buyer_consent: o.buyerConsent } : {}),
});

const APPROVAL_EVENTS: ReadonlySet<string> = new Set([
  EventTypes.OrderApprovalRequested,
  EventTypes.OrderApproved,
  EventTypes.OrderRejected,
  EventTypes.OrderExpired,
]);

export const orderApprovalEventData = (o: PurchaseOrder): OrderApprovalEventData => ({
  ...orderEventData(o),
  approvals_required: o.approvalsRequired,
  approvals: o.approvals.map((a) => ({ operator: a.operator, at: a.at, note: a.note })),
  expires_at: o.expiresAt === null ? null : new Date(Math.round(o.expiresAt * 1000)).toISOString(),
  decided_at: o.decidedAt,
  decided_by: o.decidedBy,
  decision_reason: o.decisionReason,
});

const shippedEventData = (o: PurchaseOrder): OrderShippedEventData => {
  const s = o.shipments?.[o.shipments.length - 1];
  if (!s) throw new Error(`OrderShipped of order ${o.orderId} without a shipment`);
  return {
    ...orderEventData(o),
    shipment: {
      shipment_id: s.shipmentId,
      at: s.at,
      tracking_number: s.trackingNumber,
      carrier: s.carrier,
      tracking_url: s.trackingUrl,
      lines: s.lines.map((l) => ({ line: l.line, quantity: l.quantity })),
    },
  };
};

/** The outbox row of a change to `order` (the order as it is after the change; OrderShipped: its last shipment). */
export const orderEvent = (type: OrderEventType, order: PurchaseOrder, nowMs: number): OutboxEvent => ({
  id: randomUUID(),
  type,
  subject: order.orderId,
  time: new Date(nowMs).toISOString(),
  data: APPROVAL_EVENTS.has(type)
    ? orderApprovalEventData(order)
    : type === EventTypes.OrderShipped
      ? shippedEventData(order)
      : orderEventData(order),
  ...tracing().eventContext(),
});

export const toCloudEvent = (
  e: OutboxEvent,
): CloudEvent<OrderEventData | OrderApprovalEventData | OrderShippedEventData> => ({
  specversion: '1.0',
  id: e.id,
  source: ORDER_EVENT_SOURCE,
  type: e.type,
  time: e.time,
  datacontenttype: 'application/json',
  subject: e.subject,
  ...(e.traceparent ? { traceparent: e.traceparent } : {}),
  ...(e.tracestate ? { tracestate: e.tracestate } : {}),
  data: e.data,
});
