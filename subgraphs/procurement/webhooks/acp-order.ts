import { EventTypes } from '../../../lib/events/cloudevent.ts';
import { checkoutPermalink } from '../../../lib/public-origin.ts';
import type { CheckoutSession } from '../checkout/session.ts';
import type { OrderEventData, OrderEventType, OrderLineEventData } from '../outbox/order-events.ts';
import { centsOfText } from '../spend/policy.ts';

/**
 * An order event of a checkout order as the ACP webhook's body (openapi.agentic_checkout_webhook
 * .yaml, WebhookEvent): `{type: order_create | order_update, data: Order}`, the whole order each
 * time (the spec: "the full Order object, not incremental deltas"), amounts in integer cents.
 * Pure: the session and the origin are given.
 */

export type AcpOrderEventType = 'order_create' | 'order_update';
/** The Order statuses this merchant uses (ACP also defines processing, shipped, completed). */
export type AcpOrderStatus = 'confirmed' | 'manual_review' | 'canceled';

/**
 * Each order event → the ACP event and the order's status in it. The order exists for the
 * platform from its first event on (order_create); every later change is an order_update.
 * `created` ("received but not yet confirmed") is not used: a checkout order is stored either
 * APPROVED (confirmed) or PENDING_APPROVAL (manual_review), and the completion's reply already
 * showed the platform that status.
 */
export const ACP_ORDER_EVENTS: Readonly<
  Record<
    // A shipment (OrderShipped, recorded for UCP's order events) is not sent to ACP platforms yet.
    Exclude<OrderEventType, typeof EventTypes.OrderShipped>,
    { readonly type: AcpOrderEventType; readonly status: AcpOrderStatus }
  >
> = {
  [EventTypes.OrderPlaced]: { type: 'order_create', status: 'confirmed' },
  [EventTypes.OrderApprovalRequested]: { type: 'order_create', status: 'manual_review' },
  [EventTypes.OrderApproved]: { type: 'order_update', status: 'confirmed' },
  [EventTypes.OrderRejected]: { type: 'order_update', status: 'canceled' },
  [EventTypes.OrderExpired]: { type: 'order_update', status: 'canceled' },
  [EventTypes.OrderCancelled]: { type: 'order_update', status: 'canceled' },
};

export const isAcpOrderEvent = (type: string): type is keyof typeof ACP_ORDER_EVENTS =>
  Object.hasOwn(ACP_ORDER_EVENTS, type);

type Total = { type: string; display_text: string; amount: number };
const total = (type: string, display_text: string, amount: number): Total => ({ type, display_text, amount });

/** Cents of the event's exact decimal text; the domain wrote it, so anything else is a bug. */
function cents(text: string, what: string): number {
  const c = centsOfText(text);
  if (c === undefined) throw new Error(`${what} ${JSON.stringify(text)} is not an amount`);
  return c;
}

interface Line {
  readonly id: string;
  readonly title: string;
  readonly sku: string;
  readonly quantity: number;
  readonly unitCents: number;
  readonly discountCents: number;
  readonly totalCents: number;
}

/**
 * The order's own lines (the event's, as stored with the order), named as the session named
 * them: line ids `li_<item>` as in the session's ACP rendering, titles the catalog's names. A
 * line the session does not have at that place keeps its SKU as its title.
 */
function linesOf(data: OrderEventData, session: CheckoutSession): Line[] {
  const fromEvent: readonly OrderLineEventData[] | undefined = data.lines;
  if (!fromEvent)
    return session.lines.map((l) => ({
      id: `li_${l.item}`,
      title: l.name,
      sku: l.sku,
      quantity: l.quantity,
      unitCents: l.unitCents,
      discountCents: l.discountCents,
      totalCents: l.totalCents,
    }));
  return fromEvent.map((l, i) => {
    const named = session.lines[i]?.sku === l.sku ? session.lines[i] : undefined;
    return {
      id: `li_${named ? named.item : i}`,
      title: named?.name ?? l.sku,
      sku: l.sku,
      quantity: l.quantity,
      unitCents: cents(l.unit_price, 'unit_price'),
      discountCents: cents(l.discount, 'discount'),
      totalCents: cents(l.line_total, 'line_total'),
    };
  });
}

export interface AcpOrderEventBody {
  readonly type: AcpOrderEventType;
  readonly data: Record<string, unknown>;
}

/**
 * The ACP body of an order event of `session`'s order. `origin` is ACP's api_base_url
 * (lib/public-origin.ts acpApiBaseUrl): the permalink is the session, where the platform reads
 * the order back with its key.
 */
export function acpOrderEvent(
  eventType: OrderEventType,
  data: OrderEventData,
  session: CheckoutSession,
  origin: string,
): AcpOrderEventBody {
  if (!isAcpOrderEvent(eventType)) throw new Error(`${eventType} has no ACP order event`);
  const { type, status } = ACP_ORDER_EVENTS[eventType];
  const lines = linesOf(data, session);
  const subtotal = lines.reduce((n, l) => n + l.totalCents, 0);
  const discount = lines.reduce((n, l) => n + l.discountCents, 0);
  const charged = data.total === undefined ? session.totals.totalCents : cents(data.total, 'total');
  return {
    type,
    data: {
      type: 'order',
      id: data.order_id,
      checkout_session_id: session.id,
      permalink_url: checkoutPermalink(origin, session.id),
      ...(session.purchaseOrderNumber ? { client_reference_id: session.purchaseOrderNumber } : {}),
      status,
      line_items: lines.map((l) => ({
        id: l.id,
        title: l.title,
        product_id: l.sku,
        // A canceled order keeps what was ordered; nothing of it is active any more.
        quantity: { ordered: l.quantity, current: status === 'canceled' ? 0 : l.quantity, fulfilled: 0 },
        unit_price: l.unitCents,
        subtotal: l.totalCents,
        status: status === 'canceled' ? 'removed' : 'processing',
      })),
      // The session's totals, from the order's own amounts: total is what was charged.
      totals: [
        total('items_base_amount', 'Items', subtotal + discount),
        total('items_discount', 'Discounts', discount),
        total('subtotal', 'Subtotal', subtotal),
        total('total', 'Total', charged),
      ],
    },
  };
}
