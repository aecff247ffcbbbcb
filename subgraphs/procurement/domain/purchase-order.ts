import type { ApprovalPolicy } from '../../../lib/ap2/approval-record.ts';
import type { PurchaseOrderRequest, PurchaseOrderResponse, UsdAmount } from '../contract/types.ts';
import { type BuyerConsent, consentOf } from './buyer-consent.ts';
import { checkoutOf, sameCheckout } from './order-lines.ts';

/**
 * The order's states (docs/procurement.md, "Order lifecycle"): APPROVED on creation (the spec),
 * or PENDING_APPROVAL when its spend policy asks a human to approve it (issue 22), which ends
 * APPROVED, REJECTED, EXPIRED or CANCELLED. CANCELLED, REJECTED and EXPIRED are final.
 */
export type OrderStatus = 'PENDING_APPROVAL' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';
export const ORDER_STATUSES: readonly OrderStatus[] = [
  'PENDING_APPROVAL',
  'APPROVED',
  'REJECTED',
  'EXPIRED',
  'CANCELLED',
];

/** One operator's approval of a pending order (dual control needs two distinct ones). */
export interface Approval {
  /** The operator (the `sub` of their token). */
  readonly operator: string;
  /** Unix time in seconds, fractional. */
  readonly at: number;
  readonly note: string | null;
}

/** One priced line of a checkout order; amounts are exact decimal text with two decimals ("12.50"), never doubles. */
export interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
  /** Price per unit after dynamic pricing, before discounts. */
  readonly unitPrice: string;
  /** This line's share of the promotions (allocations add up exactly to the order's discount). */
  readonly discount: string;
  /** unitPrice × quantity − discount. */
  readonly lineTotal: string;
}

/** How many units of one of the order's lines (index into its lines; 0 for a /v2 order) a shipment carried. */
export interface ShipmentLine {
  readonly line: number;
  readonly quantity: number;
}

/** A shipment an operator recorded (docs/ucp-webhooks.md, "Shipments"). */
export interface Shipment {
  readonly shipmentId: string;
  /** Unix time in seconds, fractional. */
  readonly at: number;
  /** The operator (token subject) who recorded it. */
  readonly operator: string;
  readonly trackingNumber: string;
  readonly carrier: string | null;
  readonly trackingUrl: string | null;
  readonly lines: readonly ShipmentLine[];
}

/** A stored purchase order. */
export interface PurchaseOrder {
  readonly orderId: string;
  readonly status: OrderStatus;
  readonly agentId: string;
  /** The verified workload identity that placed it: its owner. */
  readonly spiffeId: string;
  readonly sku: string;
  readonly quantity: number;
  /** The request's max_budget_usd, exactly (decimal text, never a double). */
  readonly allocatedBudget: UsdAmount;
  /** Unix time in seconds, fractional. */
  readonly processedAt: number;
  /** Unix time in seconds, fractional; null until cancelled. */
  readonly cancelledAt: number | null;
  readonly traceId: string;
  /** Distinct operator approvals the order needs: 0 (none, APPROVED on creation), 1, or 2 (dual control). */
  readonly approvalsRequired: 0 | 1 | 2;
  /** The approvals given so far, oldest first. */
  readonly approvals: readonly Approval[];
  /** Unix seconds: when a pending order expires; null when it never awaited approval. */
  readonly expiresAt: number | null;
  /** Unix seconds of the decision (approved, rejected, expired); null before. */
  readonly decidedAt: number | null;
  /** The operator who rejected it or gave the last approval; `system` for an expiry. */
  readonly decidedBy: string | null;
  /** The rejection's reason, the last approval's note, or why it expired. */
  readonly decisionReason: string | null;
  /** Bumped by every change: a change is written only over the version it was computed from. */
  readonly version: number;
  /**
   * A checkout order's priced lines (docs/procurement.md, "Orders with many lines"); null for an
   * order placed through /v2, whose one line is `sku` × `quantity`.
   */
  readonly lines: readonly OrderLine[] | null;
  /** A checkout order's total (the sum of its line totals, "12.50"); null for a /v2 order. */
  readonly total: string | null;
  /** The ACP checkout session the order completes; null for a /v2 order. */
  readonly checkoutSessionId: string | null;
  /** Shipments recorded so far, oldest first (absent or empty: none). */
  readonly shipments?: readonly Shipment[];
  /** The buyer's consent choices given with a checkout order (./buyer-consent.ts); absent: none. */
  readonly buyerConsent?: BuyerConsent | null;
  /**
   * The spend policy's approval thresholds that applied when it was placed (issue 50); absent
   * when no policy applied, and for orders placed before it was kept.
   */
  readonly approvalPolicy?: ApprovalPolicy | null;
  /**
   * The operator's decision on an order that waited, signed by this system (a compact JWS,
   * lib/ap2/approval-record.ts; ./approval-record.ts builds it); absent until decided.
   */
  readonly approvalRecord?: string | null;
}

/** What the order domain is asked to do: an already validated request and who sent it. */
export interface PlaceOrder {
  readonly request: PurchaseOrderRequest;
  readonly spiffeId: string;
  readonly traceId: string;
  /**
   * Chosen by the gateway from the agent's Idempotency-Key: placing the same id again returns
   * the stored order, so a retry after an ambiguous failure (a timeout after the commit) finds
   * the order instead of creating a second one. Absent: the domain picks a fresh id.
   */
  readonly orderId?: string;
  /**
   * Set by the gateway's approval step (issue 22) when the spend policy asks for a human
   * approval: the order is stored PENDING_APPROVAL and needs this many distinct approvals.
   */
  readonly approvalsRequired?: 1 | 2;
  /**
   * A checkout order's lines (1..50). With them, `total` is required and `request` must agree:
   * `sku` the first line's, `quantity` the lines' sum, `max_budget_usd` the total (build it with
   * `checkoutRequest`). The /v2 contract's limits do not apply to such an order (its total
   * passed the spend policy instead). A command that disagrees is refused (InvalidPlaceOrder).
   */
  readonly lines?: readonly OrderLine[];
  /** Exact decimal text with two decimals, the sum of the lines' lineTotal. */
  readonly total?: string;
  readonly checkoutSessionId?: string;
  /** A checkout order's buyer consent, as the platform gave it (only the four known choices are kept). */
  readonly buyerConsent?: unknown;
  /** The spend policy's approval thresholds that applied (the gateway's approval step; issue 50). */
  readonly approvalPolicy?: ApprovalPolicy;
  /**
   * The warm-up's order (issue 48): every check and the store's statements run, in a transaction
   * that is rolled back; nothing is stored, no event is published, nothing is bought.
   */
  readonly rehearsal?: true;
}

/**
 * The order as created. Approval is unconditional for a request that passed the contract (the
 * spec sets APPROVED on creation and allocates the whole budget), unless the gateway's approval
 * step asked for a human approval: then PENDING_APPROVAL until `approvalTtlMs` from now. Pure:
 * id and time are given.
 */
export function approve(cmd: PlaceOrder, orderId: string, nowMs: number, approvalTtlMs = 0): PurchaseOrder {
  const r = cmd.request;
  const pending = cmd.approvalsRequired !== undefined;
  const checkout = checkoutOf(cmd);
  const consent = consentOf(cmd.buyerConsent);
  return Object.freeze({
    orderId,
    status: pending ? 'PENDING_APPROVAL' : 'APPROVED',
    agentId: r.agent_id,
    spiffeId: cmd.spiffeId,
    sku: r.sku,
    quantity: r.quantity,
    // A checkout order's budget is its total, in the canonical form every order's budget has.
    allocatedBudget: checkout?.allocatedBudget ?? r.max_budget_usd,
    processedAt: nowMs / 1000,
    cancelledAt: null,
    traceId: cmd.traceId,
    approvalsRequired: cmd.approvalsRequired ?? 0,
    approvals: [],
    expiresAt: pending ? (nowMs + approvalTtlMs) / 1000 : null,
    decidedAt: null,
    decidedBy: null,
    decisionReason: null,
    version: 0,
    lines: checkout?.lines ?? null,
    total: checkout?.total ?? null,
    checkoutSessionId: checkout?.checkoutSessionId ?? null,
    ...(consent ? { buyerConsent: consent } : {}),
    ...(cmd.approvalPolicy ? { approvalPolicy: cmd.approvalPolicy } : {}),
  });
}

/**
 * What a cancel request does to an order (the state machine, pure):
 * - `cancel`: APPROVED and still inside the window → becomes CANCELLED;
 * - `already`: CANCELLED → nothing changes, the same answer again (idempotent);
 * - `too-late`: APPROVED but the window after processed_at has passed → refused.
 * The window is inclusive of its end: at exactly processed_at + window the order can still be
 * cancelled; one millisecond later it cannot.
 */
export type Cancellation = 'cancel' | 'already' | 'too-late';

export function cancellation(o: PurchaseOrder, nowMs: number, windowMs: number): Cancellation {
  if (o.status === 'CANCELLED') return 'already';
  // A pending order was never approved: its agent may withdraw it while it waits (issue 22).
  if (o.status === 'PENDING_APPROVAL') return 'cancel';
  // Rejected or expired: nothing left to cancel.
  if (o.status !== 'APPROVED') return 'too-late';
  // processed_at is stored in seconds: back to the millisecond it was made from (a double's
  // seconds × 1000 can land a hair below it, which would shift the boundary).
  return nowMs <= Math.round(o.processedAt * 1000) + windowMs ? 'cancel' : 'too-late';
}

/** The order once cancelled at `nowMs`. Pure. */
export function cancelled(o: PurchaseOrder, nowMs: number): PurchaseOrder {
  return Object.freeze({ ...o, status: 'CANCELLED', cancelledAt: nowMs / 1000, version: o.version + 1 });
}

/**
 * The order as its owner reads it: the spec's four fields, plus (issue 22) `expires_at` while
 * it waits for approval and `decision_reason` once a human (or the expiry) decided it.
 */
export function toResponse(o: PurchaseOrder): PurchaseOrderResponse {
  return {
    status: o.status,
    order_id: o.orderId,
    allocated_budget: o.allocatedBudget,
    processed_at: o.processedAt,
    ...(o.status === 'PENDING_APPROVAL' && o.expiresAt !== null
      ? { expires_at: new Date(Math.round(o.expiresAt * 1000)).toISOString() }
      : {}),
    ...(o.decisionReason !== null && o.decidedAt !== null ? { decision_reason: o.decisionReason } : {}),
  };
}

/**
 * Whether a stored order is the one this command asks for: the same owner and the same request
 * (every field of PurchaseOrderRequest, the amount as its exact text, as the gateway's
 * Idempotency-Key fingerprint compares it), and for a checkout order the same lines, total and
 * checkout session. An order id derived from an Idempotency-Key names one request; a retry with
 * that key and another body (or another checkout) must not receive the first order.
 */
export function placedBy(order: PurchaseOrder, cmd: PlaceOrder): boolean {
  const r = cmd.request;
  const checkout = checkoutOf(cmd);
  return (
    order.spiffeId === cmd.spiffeId &&
    order.agentId === r.agent_id &&
    order.sku === r.sku &&
    order.quantity === r.quantity &&
    order.allocatedBudget === (checkout?.allocatedBudget ?? r.max_budget_usd) &&
    sameCheckout(order, checkout)
  );
}

/** A given order id is already taken by an order for another request (`placedBy` is false). */
export class OrderIdConflict extends Error {
  constructor(readonly orderId: string) {
    super(`order ${orderId} was placed for another request`);
    this.name = 'OrderIdConflict';
  }
}

/** What an operator asks to record: the tracking details and, optionally, which lines (default: all that is left). */
export interface NewShipment {
  readonly shipmentId: string;
  readonly operator: string;
  readonly trackingNumber: string;
  readonly carrier: string | null;
  readonly trackingUrl: string | null;
  readonly lines?: readonly ShipmentLine[];
}

export type ShipmentVerdict =
  | { readonly kind: 'ship'; readonly next: PurchaseOrder; readonly shipment: Shipment }
  /** The same tracking number was recorded for this order already: nothing changes. */
  | { readonly kind: 'repeat' }
  | { readonly kind: 'not-shippable'; readonly reason: string }
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string };

/** Units of each line still to ship. */
export function unshipped(o: PurchaseOrder): number[] {
  const left = o.lines ? o.lines.map((l) => l.quantity) : [o.quantity];
  for (const s of o.shipments ?? []) for (const l of s.lines) left[l.line] = (left[l.line] ?? 0) - l.quantity;
  return left;
}

/**
 * Recording a shipment (the state machine, pure): only an APPROVED order ships (a pending one
 * is not confirmed, a cancelled, rejected or expired one has nothing to deliver); each line at
 * most what is left of it; without lines, everything left. Shipments are appended, never changed.
 */
export function shipment(o: PurchaseOrder, n: NewShipment, nowMs: number): ShipmentVerdict {
  if ((o.shipments ?? []).some((s) => s.trackingNumber === n.trackingNumber)) return { kind: 'repeat' };
  if (o.status !== 'APPROVED')
    return {
      kind: 'not-shippable',
      reason: `order ${o.orderId} is ${o.status}: only an APPROVED order ships`,
    };
  const left = unshipped(o);
  if (left.every((q) => q <= 0))
    return { kind: 'not-shippable', reason: `order ${o.orderId} has shipped in full already` };
  const lines = n.lines ?? left.flatMap((q, line) => (q > 0 ? [{ line, quantity: q }] : []));
  if (lines.length === 0)
    return { kind: 'invalid', field: 'lines', reason: 'lines must name at least one line' };
  const seen = new Set<number>();
  for (const [i, l] of lines.entries()) {
    if (!Number.isInteger(l.line) || l.line < 0 || l.line >= left.length)
      return {
        kind: 'invalid',
        field: `lines[${i}].line`,
        reason: `the order has lines 0 to ${left.length - 1}`,
      };
    if (seen.has(l.line)) return { kind: 'invalid', field: `lines[${i}].line`, reason: 'a line given twice' };
    seen.add(l.line);
    const max = left[l.line] ?? 0;
    if (!Number.isInteger(l.quantity) || l.quantity < 1 || l.quantity > max)
      return {
        kind: 'invalid',
        field: `lines[${i}].quantity`,
        reason:
          max > 0 ? `line ${l.line} has ${max} unit(s) left to ship` : `line ${l.line} has shipped in full`,
      };
  }
  const s: Shipment = Object.freeze({
    shipmentId: n.shipmentId,
    at: nowMs / 1000,
    operator: n.operator,
    trackingNumber: n.trackingNumber,
    carrier: n.carrier,
    trackingUrl: n.trackingUrl,
    lines: Object.freeze(lines.map((l) => Object.freeze({ line: l.line, quantity: l.quantity }))),
  });
  const next = Object.freeze({
    ...o,
    shipments: Object.freeze([...(o.shipments ?? []), s]),
    version: o.version + 1,
  });
  return { kind: 'ship', next, shipment: s };
}

export { type Checkout, checkoutRequest, InvalidPlaceOrder } from './order-lines.ts';
