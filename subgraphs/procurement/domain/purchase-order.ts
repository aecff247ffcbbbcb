import type { PurchaseOrderRequest, PurchaseOrderResponse, UsdAmount } from '../contract/types.ts';

/**
 * The order's states (docs/procurement.md, "Order lifecycle"): APPROVED on creation (the spec),
 * CANCELLED when its owner cancels it within the cancellation window. CANCELLED is final.
 */
export type OrderStatus = 'APPROVED' | 'CANCELLED';
export const ORDER_STATUSES: readonly OrderStatus[] = ['APPROVED', 'CANCELLED'];

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
}

/**
 * Approval is unconditional for a request that passed the contract: the spec sets APPROVED on
 * creation and allocates the whole budget. Pure: id and time are given.
 */
export function approve(cmd: PlaceOrder, orderId: string, nowMs: number): PurchaseOrder {
  const r = cmd.request;
  return Object.freeze({
    orderId,
    status: 'APPROVED',
    agentId: r.agent_id,
    spiffeId: cmd.spiffeId,
    sku: r.sku,
    quantity: r.quantity,
    allocatedBudget: r.max_budget_usd,
    processedAt: nowMs / 1000,
    cancelledAt: null,
    traceId: cmd.traceId,
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
  // processed_at is stored in seconds: back to the millisecond it was made from (a double's
  // seconds × 1000 can land a hair below it, which would shift the boundary).
  return nowMs <= Math.round(o.processedAt * 1000) + windowMs ? 'cancel' : 'too-late';
}

/** The order once cancelled at `nowMs`. Pure. */
export function cancelled(o: PurchaseOrder, nowMs: number): PurchaseOrder {
  return Object.freeze({ ...o, status: 'CANCELLED', cancelledAt: nowMs / 1000 });
}

export function toResponse(o: PurchaseOrder): PurchaseOrderResponse {
  return {
    status: o.status,
    order_id: o.orderId,
    allocated_budget: o.allocatedBudget,
    processed_at: o.processedAt,
  };
}
