import type { CheckoutSession } from '../checkout/session.ts';
import type { OrderLine, PurchaseOrder } from '../domain/purchase-order.ts';
import { centsOfText } from '../spend/policy.ts';

/**
 * A checkout order as UCP's `order` (schemas/ucp/v2026-04-08/schemas/shopping/order.json): the
 * body of `GET /orders/{id}` and of every order event webhook, "the full order entity" each time
 * (order.md, Events). Pure: the order, its session and the REST endpoint are given.
 *
 * - `line_items` are the order's own lines in integer minor units, with the ids (`li_<n>`) and
 *   titles of the session's rendering; `quantity.total` is 0 once the order is canceled, and
 *   `status` is derived from the quantities exactly as order.md's "Status Derivation" says.
 * - `fulfillment.expectations` come from the session's UCP fulfillment (the selected destination
 *   of each method, the selected option's title as the description); `fulfillment.events` are
 *   the shipments the merchant recorded (append-only).
 * - `adjustments`: a canceled, rejected or expired order has one `cancellation` (its totals
 *   negative: the whole charge is given back), as order.md's Adjustments describe.
 */

/** The UCP release whose order this renders (the tag is `v` + this date). */
export const UCP_ORDER_VERSION = '2026-04-08';
export const UCP_ORDER_CAPABILITY = 'dev.ucp.shopping.order';

/** A shipment the merchant recorded, in the terms the renderer needs. */
export interface UcpShipmentFacts {
  readonly id: string;
  /** RFC 3339. */
  readonly occurredAt: string;
  /** A fulfillment event type (open string; this merchant records `shipped`). */
  readonly type: string;
  readonly trackingNumber: string | null;
  readonly trackingUrl: string | null;
  readonly carrier: string | null;
  /** Which of the order's lines (index into its lines) and how many of each. */
  readonly lines: readonly { readonly line: number; readonly quantity: number }[];
}

export type UcpOrderFacts = Pick<
  PurchaseOrder,
  'orderId' | 'status' | 'lines' | 'total' | 'processedAt' | 'cancelledAt' | 'decidedAt' | 'decisionReason'
>;

export interface RenderUcpOrder {
  readonly order: UcpOrderFacts;
  readonly session: Pick<CheckoutSession, 'id' | 'currency' | 'lines' | 'totals' | 'fulfillment'>;
  /** The UCP REST endpoint (`<origin>/ucp`): the permalink is `<restEndpoint>/orders/<id>`. */
  readonly restEndpoint: string;
  /** The shipments recorded for the order, oldest first. */
  readonly shipments?: readonly UcpShipmentFacts[];
}

type Json = Record<string, unknown>;
type Total = { readonly type: string; readonly display_text?: string; readonly amount: number };

/** Where a UCP platform reads the order (order-rest.md: `GET /orders/{id}` under the REST endpoint). */
export const ucpOrderPermalink = (restEndpoint: string, orderId: string): string =>
  `${restEndpoint.replace(/\/+$/, '')}/orders/${encodeURIComponent(orderId)}`;

/** The line id a session line has in every UCP rendering (checkout and order alike): its item's index. */
export const ucpLineId = (item: number): string => `li_${item}`;

/** The shipments of an order in the renderer's terms. */
export function shipmentsOf(o: PurchaseOrder): UcpShipmentFacts[] {
  return (o.shipments ?? []).map((s) => ({
    id: s.shipmentId,
    occurredAt: new Date(Math.round(s.at * 1000)).toISOString(),
    type: 'shipped',
    trackingNumber: s.trackingNumber,
    trackingUrl: s.trackingUrl,
    carrier: s.carrier,
    lines: s.lines,
  }));
}

/** Cents of exact decimal text the order domain wrote; anything else is a bug, not input. */
function cents(text: string, what: string): number {
  const c = centsOfText(text);
  if (c === undefined) throw new Error(`${what} ${JSON.stringify(text)} is not an amount`);
  return c;
}

interface Line {
  readonly id: string;
  readonly sku: string;
  readonly title: string;
  readonly quantity: number;
  readonly unitCents: number;
  readonly baseCents: number;
  readonly discountCents: number;
  readonly totalCents: number;
}

/** The order's own lines (as stored with it), named as the session named them. */
function linesOf(order: UcpOrderFacts, session: RenderUcpOrder['session']): Line[] {
  const stored: readonly OrderLine[] | null = order.lines;
  if (!stored)
    return session.lines.map((l) => ({
      id: ucpLineId(l.item),
      sku: l.sku,
      title: l.name,
      quantity: l.quantity,
      unitCents: l.unitCents,
      baseCents: l.baseCents,
      discountCents: l.discountCents,
      totalCents: l.totalCents,
    }));
  return stored.map((l, i) => {
    const named = session.lines[i]?.sku === l.sku ? session.lines[i] : undefined;
    const unitCents = cents(l.unitPrice, 'unitPrice');
    return {
      // The checkout's id of the line (its item's index), as the checkout's fulfillment names it.
      id: ucpLineId(named ? named.item : i),
      sku: l.sku,
      title: named?.name ?? l.sku,
      quantity: l.quantity,
      unitCents,
      baseCents: unitCents * l.quantity,
      discountCents: cents(l.discount, 'discount'),
      totalCents: cents(l.lineTotal, 'lineTotal'),
    };
  });
}

/** subtotal, items_discount (negative, only when there is one: the schema forbids 0), total. */
function totalsOf(base: number, discount: number, total: number, extra: readonly Total[] = []): Total[] {
  return [
    { type: 'subtotal', display_text: 'Subtotal', amount: base },
    ...(discount > 0 ? [{ type: 'items_discount', display_text: 'Item Discounts', amount: -discount }] : []),
    ...extra,
    { type: 'total', display_text: 'Total', amount: total },
  ];
}

/** order.md, "Status Derivation". */
function lineStatus(total: number, fulfilled: number): string {
  if (total === 0) return 'removed';
  if (fulfilled >= total) return 'fulfilled';
  if (fulfilled > 0) return 'partial';
  return 'processing';
}

const CANCELED: ReadonlySet<string> = new Set(['CANCELLED', 'REJECTED', 'EXPIRED']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const arrayOf = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);
const POSTAL_FIELDS = [
  'first_name',
  'last_name',
  'street_address',
  'extended_address',
  'address_locality',
  'address_region',
  'postal_code',
  'address_country',
  'phone_number',
] as const;

/** A destination as a postal address: the session's selected destination without its id. */
function postalAddress(d: Json): Json {
  const out: Json = {};
  for (const f of POSTAL_FIELDS) if (typeof d[f] === 'string') out[f] = d[f];
  return out;
}

/**
 * The buyer-facing expectations from the session's UCP fulfillment (types/fulfillment.json as the
 * checkout rendered it): one per group with a selected option (its title the description), or
 * one per method without groups; each needs a destination (expectation.json requires one).
 */
function expectationsOf(fulfillment: unknown, lines: readonly Line[]): Json[] {
  const quantityOf = new Map(lines.map((l) => [l.id, l.quantity]));
  const refs = (ids: unknown) =>
    (Array.isArray(ids) ? ids : lines.map((l) => l.id))
      .filter((id): id is string => typeof id === 'string' && (quantityOf.get(id) ?? 0) > 0)
      .map((id) => ({ id, quantity: quantityOf.get(id) as number }));
  const out: Json[] = [];
  for (const method of arrayOf(isObject(fulfillment) ? fulfillment.methods : undefined)) {
    const destinations = arrayOf(method.destinations);
    const chosen =
      destinations.find((d) => d.id !== undefined && d.id === method.selected_destination_id) ??
      (destinations.length === 1 ? destinations[0] : undefined);
    if (!chosen) continue;
    const methodType = method.type === 'pickup' ? 'pickup' : 'shipping';
    const groups = arrayOf(method.groups);
    const parts = groups.length
      ? groups.map((g) => ({
          ids: g.line_item_ids ?? method.line_item_ids,
          option: arrayOf(g.options).find((o) => o.id === g.selected_option_id),
        }))
      : [{ ids: method.line_item_ids, option: undefined }];
    for (const part of parts) {
      const items = refs(part.ids);
      if (items.length === 0) continue;
      const title = part.option?.title;
      out.push({
        id: `exp_${out.length + 1}`,
        line_items: items,
        method_type: methodType,
        destination: postalAddress(chosen),
        ...(typeof title === 'string' ? { description: title } : {}),
        fulfillable_on: 'now',
      });
    }
  }
  return out;
}

/** Seconds (fractional, as the order domain stores them) as RFC 3339. */
const isoOfSeconds = (s: number): string => new Date(Math.round(s * 1000)).toISOString();

/** The UCP order of a checkout order (see the top of this file). */
export function renderUcpOrder(r: RenderUcpOrder): Json {
  const { order, session } = r;
  const lines = linesOf(order, session);
  const shipments = r.shipments ?? [];
  const canceled = CANCELED.has(order.status);
  const fulfilled = new Map<number, number>();
  for (const s of shipments)
    if (s.type === 'shipped')
      for (const l of s.lines) fulfilled.set(l.line, (fulfilled.get(l.line) ?? 0) + l.quantity);
  const base = lines.reduce((n, l) => n + l.baseCents, 0);
  const discount = lines.reduce((n, l) => n + l.discountCents, 0);
  const linesTotal = lines.reduce((n, l) => n + l.totalCents, 0);
  const charged = order.total === null ? session.totals.totalCents : cents(order.total, 'total');
  // What was charged beyond the lines (a fulfilment price) is the fulfillment total.
  const beyond = charged - linesTotal;
  const canceledAt = order.cancelledAt ?? order.decidedAt ?? order.processedAt;
  return {
    ucp: {
      version: UCP_ORDER_VERSION,
      capabilities: { [UCP_ORDER_CAPABILITY]: [{ version: UCP_ORDER_VERSION }] },
    },
    id: order.orderId,
    checkout_id: session.id,
    permalink_url: ucpOrderPermalink(r.restEndpoint, order.orderId),
    currency: session.currency.toUpperCase(),
    line_items: lines.map((l, i) => {
      const total = canceled ? 0 : l.quantity;
      const done = Math.min(fulfilled.get(i) ?? 0, l.quantity);
      return {
        id: l.id,
        item: { id: l.sku, title: l.title, price: l.unitCents },
        quantity: { original: l.quantity, total, fulfilled: done },
        totals: totalsOf(l.baseCents, l.discountCents, l.totalCents),
        status: lineStatus(total, done),
      };
    }),
    fulfillment: {
      // A canceled order promises nothing any more; what happened stays in the events.
      expectations: canceled ? [] : expectationsOf(session.fulfillment, lines),
      events: shipments.map((s) => ({
        id: s.id,
        occurred_at: s.occurredAt,
        type: s.type,
        line_items: s.lines
          .filter((l) => lines[l.line] !== undefined && l.quantity > 0)
          .map((l) => ({ id: (lines[l.line] as Line).id, quantity: l.quantity })),
        ...(s.trackingNumber !== null ? { tracking_number: s.trackingNumber } : {}),
        ...(s.trackingUrl !== null ? { tracking_url: s.trackingUrl } : {}),
        ...(s.carrier !== null ? { carrier: s.carrier } : {}),
      })),
    },
    adjustments: canceled
      ? [
          {
            id: `adj_${order.orderId}_cancellation`,
            type: 'cancellation',
            occurred_at: isoOfSeconds(canceledAt),
            status: 'completed',
            line_items: lines.map((l) => ({ id: l.id, quantity: -l.quantity })),
            totals: [{ type: 'total', display_text: 'Total', amount: -charged }],
            description: cancellationReason(order),
          },
        ]
      : [],
    totals: totalsOf(
      base,
      discount,
      charged,
      beyond > 0 ? [{ type: 'fulfillment', display_text: 'Fulfillment', amount: beyond }] : [],
    ),
    ...(order.status === 'PENDING_APPROVAL'
      ? {
          messages: [
            {
              type: 'info',
              code: 'requires_buyer_review',
              content: "The order waits for the merchant's approval; it is not confirmed yet.",
            },
          ],
        }
      : {}),
  };
}

function cancellationReason(o: UcpOrderFacts): string {
  const why = o.decisionReason ? `: ${o.decisionReason}` : '';
  if (o.status === 'REJECTED') return `Rejected by the merchant${why}`;
  if (o.status === 'EXPIRED') return `Expired without the merchant's approval${why}`;
  return "Canceled by the buyer's agent";
}
