import type { PurchaseOrderRequest, PurchaseOrderResponse, UsdAmount } from '../contract/types.ts';

/** A stored purchase order (spec: status APPROVED on creation; other states not shown). */
export interface PurchaseOrder {
  readonly orderId: string;
  readonly status: 'APPROVED';
  readonly agentId: string;
  /** The verified workload identity that placed it. */
  readonly spiffeId: string;
  readonly sku: string;
  readonly quantity: number;
  /** The request's max_budget_usd, exactly (decimal text, never a double). */
  readonly allocatedBudget: UsdAmount;
  /** Unix time in seconds, fractional. */
  readonly processedAt: number;
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
    traceId: cmd.traceId,
  });
}

export function toResponse(o: PurchaseOrder): PurchaseOrderResponse {
  return {
    status: o.status,
    order_id: o.orderId,
    allocated_budget: o.allocatedBudget,
    processed_at: o.processedAt,
  };
}
