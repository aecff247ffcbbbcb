import { amountOf as amount, centsOf as cents } from '../../../lib/money.ts';
import type { CartInput, PriceSource, QuoteFacts, TokenLine } from '../../../lib/quote-token/index.ts';
import type { PricedBasket, PromotionEvaluation } from '../domain/shapes.ts';

/**
 * The consolidated cart quote: priced lines + the promotions evaluation → the reply and the
 * facts its quote token signs. Shared by the edge (GET /cart/quote) and this subgraph's
 * CartQuote.quoteToken, so it lives here, below both (dependencies point down).
 * Amounts are 2-decimal prices and discounts, so the sums run in integer cents (lib/money.ts).
 */

/** A catalog product as the quote shows it. */
export interface QuoteEntry {
  sku: string;
  name: string;
  category: string;
}

/** A line's price and where it came from. */
export interface SourcedPrice {
  basePrice: number;
  unitPrice: number;
  appliedModifiers: string[];
  source: PriceSource;
}

/** One line of the reply (schemas/openapi/edge.yaml#/components/schemas/QuoteLine). */
export interface QuoteLine extends TokenLine {
  name: string;
  category: string;
}

export interface PromotionsOutcome {
  status: 'evaluated' | 'unavailable';
  applied: {
    promotionId: string;
    name: string;
    actions: string[];
    couponCode?: string;
    amount: number;
    allocations: { sku: string; amount: number }[];
  }[];
  notApplied: { promotionId: string; name: string; reason: string; detail: string }[];
  coupons: { code: string; status: string; promotionId?: string }[];
}

/** The reply of GET /cart/quote before the token is added. */
export interface QuoteBody {
  id: string;
  currency: string;
  region: string;
  customerSegment: string | null;
  customerId: string | null;
  coupons: string[];
  lines: QuoteLine[];
  subtotal: number;
  discountTotal: number;
  total: number;
  promotions: PromotionsOutcome;
  degraded: boolean;
}

export interface PricedLine {
  entry: QuoteEntry;
  quantity: number;
  price: SourcedPrice;
}

/** A line's total in cents: unit price × quantity (exact: unit prices have 2 decimals). */
export const lineTotalCents = (l: PricedLine): number => cents(l.price.unitPrice) * l.quantity;

/** The basket promotions evaluate: the priced lines in the cart's order. */
export function basketOf(cart: CartInput, lines: readonly PricedLine[]): PricedBasket {
  const customer = {
    ...(cart.customerId ? { id: cart.customerId } : {}),
    ...(cart.customerSegment ? { segment: cart.customerSegment } : {}),
  };
  return {
    currency: cart.currency,
    ...(Object.keys(customer).length > 0 ? { customer } : {}),
    ...(cart.coupons && cart.coupons.length > 0 ? { coupons: [...cart.coupons] } : {}),
    lines: lines.map((l) => ({
      sku: l.entry.sku,
      category: l.entry.category,
      quantity: l.quantity,
      unitPrice: l.price.unitPrice,
      lineTotal: amount(lineTotalCents(l)).toFixed(2),
    })),
  };
}

function outcomeOf(evaluation: PromotionEvaluation | undefined): PromotionsOutcome {
  if (!evaluation) return { status: 'unavailable', applied: [], notApplied: [], coupons: [] };
  return {
    status: 'evaluated',
    applied: evaluation.applied.map((a) => ({
      promotionId: a.promotionId,
      name: a.name,
      actions: a.actions,
      ...(a.couponCode ? { couponCode: a.couponCode } : {}),
      amount: a.amount,
      allocations: a.allocations.map((x) => ({ sku: x.sku, amount: x.amount })),
    })),
    notApplied: evaluation.notApplied.map((n) => ({
      promotionId: n.promotionId,
      name: n.name,
      reason: n.reason,
      detail: n.detail,
    })),
    coupons: evaluation.coupons.map((c) => ({
      code: c.code,
      status: c.status,
      ...(c.promotionId ? { promotionId: c.promotionId } : {}),
    })),
  };
}

/** The fields a quoted line takes from its priced line, in REST and in GraphQL alike. */
export function pricedLineFields(l: PricedLine) {
  return {
    sku: l.entry.sku,
    name: l.entry.name,
    category: l.entry.category,
    quantity: l.quantity,
    basePrice: l.price.basePrice,
    unitPrice: l.price.unitPrice,
    appliedModifiers: l.price.appliedModifiers,
    source: l.price.source,
  };
}

/**
 * A quoted line: its priced line's fields and its amounts. Added to the fields' own object
 * rather than written `{ ...pricedLineFields(l), lineTotal, … }`: a clone that is then extended
 * gets a hidden class of its own in V8, one per line (docs/performance.md, "Fifth pass").
 */
const quotedLine = (l: PricedLine, lineTotal: number, discount: number): QuoteLine =>
  Object.assign(pricedLineFields(l), {
    lineTotal: amount(lineTotal),
    discount: amount(discount),
    total: amount(lineTotal - discount),
  });

/**
 * The consolidated quote: lines with their prices and sources, each line's share of the
 * discounts, and totals in exact decimals. Without an evaluation (promotions unavailable) there
 * are no discounts and the reply says so.
 */
export function assembleQuote(
  cart: CartInput,
  id: string,
  lines: readonly PricedLine[],
  evaluation: PromotionEvaluation | undefined,
): { body: QuoteBody; facts: QuoteFacts } {
  let subtotal = 0;
  let discountTotal = 0;
  const discounts = new Map(evaluation?.lines.map((r) => [r.lineIndex, cents(r.discount)]));
  const quoted: QuoteLine[] = lines.map((l, i) => {
    const lineTotal = lineTotalCents(l);
    const discount = discounts.get(i) ?? 0;
    subtotal += lineTotal;
    discountTotal += discount;
    return quotedLine(l, lineTotal, discount);
  });
  const promotions = outcomeOf(evaluation);
  const totals = {
    subtotal: amount(subtotal),
    discountTotal: amount(discountTotal),
    total: amount(subtotal - discountTotal),
  };
  const degraded =
    promotions.status === 'unavailable' || quoted.some((l) => l.source !== 'live' && l.source !== 'cache');
  const body: QuoteBody = {
    id,
    currency: cart.currency,
    region: cart.region,
    customerSegment: cart.customerSegment ?? null,
    customerId: cart.customerId ?? null,
    coupons: [...(cart.coupons ?? [])],
    lines: quoted,
    ...totals,
    promotions,
    degraded,
  };
  const facts: QuoteFacts = {
    currency: cart.currency,
    lines: quoted.map(({ name: _n, category: _c, ...line }) => line),
    totals,
    promotions: promotions.applied.map((a) => ({ promotionId: a.promotionId, amount: a.amount })),
    promotionsEvaluated: promotions.status === 'evaluated',
  };
  return { body, facts };
}
