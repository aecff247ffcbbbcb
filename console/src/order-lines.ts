/**
 * An order's lines as GraphQL `PurchaseOrder.lines` gives them: a checkout order (ACP) has its
 * priced lines and a total; an order placed through /v2 has one line, its SKU and quantity,
 * with null amounts and a null total (docs/procurement.md, "Orders with many lines").
 */
import { formatAmount } from './amounts.ts';

export interface OrderLine {
  sku: string;
  quantity: number;
  unitPriceDecimal: string | null;
  discountDecimal: string | null;
  lineTotalDecimal: string | null;
}

export interface PricedLine {
  sku: string;
  quantity: number;
  unitPriceDecimal: string;
  discountDecimal: string;
  lineTotalDecimal: string;
}

/** What the operations ask of an order for its lines (PurchaseOrderSearch, PendingApprovals). */
export interface WithLines {
  lines?: readonly OrderLine[] | null;
  totalDecimal?: string | null;
  checkoutSessionId?: string | null;
}

const priced = (l: OrderLine): l is PricedLine =>
  l.unitPriceDecimal !== null && l.discountDecimal !== null && l.lineTotalDecimal !== null;

/** A checkout order's priced lines; null for a /v2 order (no total, amounts absent). */
export function pricedLines(o: WithLines): PricedLine[] | null {
  const lines = o.lines ?? [];
  if (o.totalDecimal == null || lines.length === 0 || !lines.every(priced)) return null;
  return lines.filter(priced);
}

/** Whether a discount is more than nothing ("0.00", "0" and "" are none). */
const hasDiscount = (text: string) => /[1-9]/.test(text);

/** "2 × SKU-ABC-000001 at 12.50 USD, discount 1.00 USD, total 24.00 USD" (no discount: left out). */
export function lineSentence(l: PricedLine, currency = 'USD'): string {
  const at = `${l.quantity} × ${l.sku} at ${formatAmount(l.unitPriceDecimal)} ${currency}`;
  const discount = hasDiscount(l.discountDecimal)
    ? `, discount ${formatAmount(l.discountDecimal)} ${currency}`
    : '';
  return `${at}${discount}, total ${formatAmount(l.lineTotalDecimal)} ${currency}`;
}

/** "3 lines" / "1 line". */
export const lineCount = (n: number) => `${n} ${n === 1 ? 'line' : 'lines'}`;
