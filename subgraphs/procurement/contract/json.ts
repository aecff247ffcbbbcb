import { Decimal } from 'decimal.js';
import { plainText } from '../../../lib/json/exact-number.ts';
import type { PurchaseOrderRequest, PurchaseOrderResponse, UsdAmount } from './types.ts';

/**
 * The order shapes as JSON text with their amounts written exactly. JSON.stringify would need a
 * double for a number (and Node 20 has no JSON.rawJSON), so the few fixed shapes are written
 * here, every string through JSON.stringify and every amount checked before it is spliced in.
 */

/** Plain decimal text with at most 2 places, no exponent, no trailing zeros. */
const CANONICAL_USD = /^(?:0|[1-9]\d*)(?:\.\d?[1-9])?$/;

export const isUsdAmount = (v: unknown): v is UsdAmount => typeof v === 'string' && CANONICAL_USD.test(v);

/**
 * The canonical UsdAmount of an exact decimal text (as Postgres returns a numeric: "250.50"),
 * or undefined when it has more than 2 decimal places or is not a non-negative decimal.
 */
export function usdAmount(text: string): UsdAmount | undefined {
  let d: Decimal;
  try {
    d = new Decimal(text);
  } catch {
    return undefined;
  }
  if (!d.isFinite() || d.isNegative() || d.decimalPlaces() > 2) return undefined;
  const plain = plainText(d);
  return isUsdAmount(plain) ? plain : undefined;
}

function amount(v: UsdAmount): string {
  if (!isUsdAmount(v)) throw new TypeError(`not a canonical USD amount: ${JSON.stringify(v)}`);
  return v;
}

/** A PurchaseOrderRequest as JSON, max_budget_usd as an exact number. */
export const purchaseOrderRequestJson = (r: PurchaseOrderRequest): string =>
  `{"agent_id":${JSON.stringify(r.agent_id)},"sku":${JSON.stringify(r.sku)},"quantity":${JSON.stringify(r.quantity)},"max_budget_usd":${amount(r.max_budget_usd)}}`;

/** A PurchaseOrderResponse as JSON, allocated_budget as an exact number. */
export const purchaseOrderResponseJson = (r: PurchaseOrderResponse): string =>
  `{"status":${JSON.stringify(r.status)},"order_id":${JSON.stringify(r.order_id)},"allocated_budget":${amount(r.allocated_budget)},"processed_at":${JSON.stringify(r.processed_at)}${
    r.expires_at === undefined ? '' : `,"expires_at":${JSON.stringify(r.expires_at)}`
  }${r.decision_reason === undefined ? '' : `,"decision_reason":${JSON.stringify(r.decision_reason)}`}}`;

/** The agent's order list (OrderList): each order with its exact amount, then the cursor. */
export const orderListJson = (orders: readonly PurchaseOrderResponse[], nextCursor: string | null): string =>
  `{"orders":[${orders.map(purchaseOrderResponseJson).join(',')}],"next_cursor":${JSON.stringify(nextCursor)}}`;
