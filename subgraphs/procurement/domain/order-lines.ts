import {
  CHECKOUT_SESSION_ID,
  DECIMAL_AMOUNT,
  MAX_LINE_QUANTITY,
  MAX_ORDER_LINES,
  SKU_PATTERN,
} from '../contract/checkout.ts';
import { usdAmount } from '../contract/json.ts';
import type { PurchaseOrderRequest, UsdAmount } from '../contract/types.ts';
import type { OrderLine, PlaceOrder, PurchaseOrder } from './purchase-order.ts';

/**
 * Checkout orders (one order, many priced lines): the rules that tie a PlaceOrder's lines, total
 * and request together. Pure; amounts in BigInt cents, never doubles.
 */

/** A place command whose lines, total and request disagree: a programming error of the caller. */
export class InvalidPlaceOrder extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPlaceOrder';
  }
}

/** A checkout order's fields, checked and normalised (null for a /v2 order). */
export interface Checkout {
  readonly lines: readonly OrderLine[];
  readonly total: string;
  readonly checkoutSessionId: string | null;
  /** The total as the order's allocated budget (canonical UsdAmount: "12.5"). */
  readonly allocatedBudget: UsdAmount;
}

const refuse = (message: string): never => {
  throw new InvalidPlaceOrder(message);
};

/** Cents of an amount "12.50" (two decimals, checked). */
function cents(text: unknown, what: string): bigint {
  if (typeof text !== 'string' || !DECIMAL_AMOUNT.test(text))
    return refuse(`${what} is not a decimal amount with two decimals: ${JSON.stringify(text)}`);
  return BigInt(text.replace('.', ''));
}

function checkedLine(l: OrderLine, i: number): OrderLine {
  const at = `lines[${i}]`;
  if (typeof l?.sku !== 'string' || !SKU_PATTERN.test(l.sku)) refuse(`${at}.sku is not a SKU`);
  if (!Number.isInteger(l.quantity) || l.quantity < 1 || l.quantity > MAX_LINE_QUANTITY)
    refuse(`${at}.quantity is not a whole number from 1 to ${MAX_LINE_QUANTITY}`);
  const expected =
    cents(l.unitPrice, `${at}.unitPrice`) * BigInt(l.quantity) - cents(l.discount, `${at}.discount`);
  if (cents(l.lineTotal, `${at}.lineTotal`) !== expected)
    refuse(`${at}.lineTotal is not unitPrice × quantity − discount`);
  return Object.freeze({
    sku: l.sku,
    quantity: l.quantity,
    unitPrice: l.unitPrice,
    discount: l.discount,
    lineTotal: l.lineTotal,
  });
}

/**
 * The checkout fields of a place command, checked: 1..50 valid lines, each line total equal to
 * unitPrice × quantity − discount, `total` their sum, and `request` built from them (first
 * line's SKU, the quantities' sum, `max_budget_usd` equal to the total). Null when the command
 * has none of them (a /v2 order). Throws InvalidPlaceOrder when anything disagrees.
 */
export function checkoutOf(cmd: PlaceOrder): Checkout | null {
  const { lines, total, checkoutSessionId: session } = cmd;
  if (lines === undefined) {
    if (total !== undefined || session !== undefined)
      refuse('total and checkoutSessionId come with the lines of a checkout order');
    return null;
  }
  if (!Array.isArray(lines) || lines.length < 1 || lines.length > MAX_ORDER_LINES)
    refuse(`a checkout order has 1 to ${MAX_ORDER_LINES} lines`);
  if (session !== undefined && (typeof session !== 'string' || !CHECKOUT_SESSION_ID.test(session)))
    refuse('checkoutSessionId is not a checkout session id');
  const checked = Object.freeze(lines.map(checkedLine));
  const sum = checked.reduce((s, l) => s + cents(l.lineTotal, 'lineTotal'), 0n);
  if (cents(total, 'total') !== sum) refuse('total is not the sum of the line totals');
  const r = cmd.request;
  if (r.sku !== checked[0]?.sku) refuse("request.sku is not the first line's SKU");
  if (r.quantity !== checked.reduce((q, l) => q + l.quantity, 0))
    refuse("request.quantity is not the sum of the lines' quantities");
  const budget = usdAmount(String(r.max_budget_usd));
  const allocatedBudget = usdAmount(total as string);
  if (budget === undefined || budget !== allocatedBudget) refuse('request.max_budget_usd is not the total');
  return Object.freeze({
    lines: checked,
    total: total as string,
    checkoutSessionId: session ?? null,
    allocatedBudget: allocatedBudget as UsdAmount,
  });
}

/** Whether a stored order has exactly these checkout fields (both null for a /v2 order). */
export function sameCheckout(order: PurchaseOrder, c: Checkout | null): boolean {
  if (c === null) return order.lines === null && order.total === null && order.checkoutSessionId === null;
  const lines = order.lines;
  return (
    lines !== null &&
    order.total === c.total &&
    order.checkoutSessionId === c.checkoutSessionId &&
    lines.length === c.lines.length &&
    lines.every((l, i) => {
      const o = c.lines[i] as OrderLine;
      return (
        l.sku === o.sku &&
        l.quantity === o.quantity &&
        l.unitPrice === o.unitPrice &&
        l.discount === o.discount &&
        l.lineTotal === o.lineTotal
      );
    })
  );
}

/**
 * The PurchaseOrderRequest of a checkout order, as the domain expects it beside the lines:
 * the caller's agent id, the first line's SKU, the quantities' sum and the total as budget.
 */
export function checkoutRequest(
  agentId: string,
  lines: readonly OrderLine[],
  total: string,
): PurchaseOrderRequest {
  const first = lines[0];
  const budget = usdAmount(total);
  if (!first || budget === undefined) return refuse('a checkout order has lines and an exact total');
  return Object.freeze({
    agent_id: agentId,
    sku: first.sku,
    quantity: lines.reduce((q, l) => q + l.quantity, 0),
    max_budget_usd: budget,
  });
}
