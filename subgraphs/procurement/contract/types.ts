/**
 * The TypeScript face of components.schemas.PurchaseOrderRequest / PurchaseOrderResponse in
 * schemas/openapi/procurement.yaml. The schema is the source; these types are checked against
 * it by test/procurement/contract.test.ts (same property names, same required set, same JSON
 * types), so they cannot drift apart silently.
 */

/**
 * An exact amount of US dollars as plain decimal text, at most 2 decimals, no exponent and no
 * trailing zeros ("250.75", "1000"): a JSON number on the wire, never a double in between.
 * Made only by the contract (validate.ts) or from the store (`usdAmount`).
 */
export type UsdAmount = string & { readonly __brand: 'UsdAmount' };

/** Body sent by an agent (spec, "PurchaseOrderRequest"). Immutable once parsed. */
export interface PurchaseOrderRequest {
  readonly agent_id: string;
  readonly sku: string;
  readonly quantity: number;
  readonly max_budget_usd: UsdAmount;
}

/**
 * Body returned with 201 (spec, "PurchaseOrderResponse"), and the order as its owner reads,
 * lists and cancels it (status CANCELLED after a cancellation; a 201 is always APPROVED, a 202
 * PENDING_APPROVAL).
 */
export interface PurchaseOrderResponse {
  readonly status: 'PENDING_APPROVAL' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';
  readonly order_id: string;
  /** The request's max_budget_usd, exactly. */
  readonly allocated_budget: UsdAmount;
  /** Unix time in seconds, fractional. */
  readonly processed_at: number;
  /** RFC 3339 UTC: while PENDING_APPROVAL, when the approval request expires (issue 22). */
  readonly expires_at?: string;
  /** Why the order was decided as it was (rejection reason, approval note, expiry); absent before. */
  readonly decision_reason?: string;
}

/** The JSON type of each field, for the schema/type agreement test. */
export const PURCHASE_ORDER_REQUEST_FIELDS = {
  agent_id: 'string',
  sku: 'string',
  quantity: 'integer',
  max_budget_usd: 'number',
} as const satisfies Record<keyof PurchaseOrderRequest, string>;

export const PURCHASE_ORDER_RESPONSE_FIELDS = {
  status: 'string',
  order_id: 'string',
  allocated_budget: 'number',
  processed_at: 'number',
  expires_at: 'string',
  decision_reason: 'string',
} as const satisfies Record<keyof PurchaseOrderResponse, string>;

/** The fields of PurchaseOrderResponse that are not always present (issue 22); the rest are required. */
export const PURCHASE_ORDER_RESPONSE_OPTIONAL: readonly (keyof PurchaseOrderResponse)[] = [
  'expires_at',
  'decision_reason',
];
