import type {
  CheckoutSession,
  RejectedCode,
  SessionItem,
  SessionLine,
  SessionProblem,
  SessionStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import { formatJsonPath as jsonPath } from './schema/index.ts';
import { ACP_VERSION } from './version.ts';

/**
 * A checkout session as ACP's CheckoutSession (CheckoutSessionWithOrder once an order exists),
 * in integer minor units with the currency in lower case, as the 2026-04-17 bundle defines it.
 * Every response the tests see is validated against the vendored bundle (schemas/acp/).
 */

export interface RenderOptions {
  /** Policy links from ACP_LINKS. */
  readonly links: readonly { readonly type: string; readonly url: string }[];
  /** Where the platform reads the order back: its session (lib/public-origin.ts checkoutPermalink). */
  readonly permalink: (sessionId: string) => string;
}

/** The one fulfilment option a purchase order has: delivery under the buyer's procurement terms. */
export const FULFILLMENT_OPTION_ID = 'procurement_delivery';

/** The discount extension as this merchant declares it in a session's capabilities. */
export const DISCOUNT_EXTENSION = {
  name: 'discount',
  extends: [
    '$.CheckoutSessionCreateRequest.discounts',
    '$.CheckoutSessionUpdateRequest.discounts',
    '$.CheckoutSession.discounts',
  ],
} as const;

const lineId = (item: number) => `li_${item}`;
const iso = (ms: number) => new Date(ms).toISOString();

type Total = { type: string; display_text: string; amount: number };
export const total = (type: string, display_text: string, amount: number): Total => ({
  type,
  display_text,
  amount,
});

/** Promotions' code rejection → the discount extension's DiscountErrorCode. */
const discountCode = (r: RejectedCode) => `discount_code_${r.reason}`;

/** A problem of the session (or cart) as an ACP message; `param` points into the agent's request. */
export function messageOf(p: SessionProblem) {
  const param = p.item !== undefined ? jsonPath(['line_items', p.item]) : undefined;
  const where = param ? { param } : {};
  if (!p.blocking) return { type: 'info', ...where, content_type: 'plain', content: p.message };
  const code = {
    unknown_sku: 'not_found',
    unpriced: 'unsupported',
    out_of_stock: 'out_of_stock',
    spend_refused: 'maximum_exceeded',
    price_changed: 'invalid',
    promotions_unavailable: 'unsupported',
    approval_rejected: 'approval_required',
    approval_expired: 'expired',
    order_cancelled: 'conflict',
    order_failed: 'invalid',
    fallback_prices: 'invalid',
  }[p.kind];
  return {
    type: 'error',
    code,
    ...where,
    content_type: 'plain',
    content: p.message,
    resolution: p.kind === 'spend_refused' ? 'requires_buyer_review' : 'recoverable',
  };
}

function messagesOf(s: CheckoutSession) {
  const out: Record<string, unknown>[] = s.problems.map(messageOf);
  for (const r of s.rejected)
    out.push({
      type: 'warning',
      code: discountCode(r),
      param: jsonPath(['discounts', 'codes', r.index]),
      content_type: 'plain',
      content: r.message,
    });
  if (s.status === 'pending_approval')
    out.push({
      type: 'info',
      resolution: 'requires_buyer_review',
      content_type: 'plain',
      content:
        'The order waits for an operator to approve it (the spend policy asks for approval above its threshold).',
    });
  return out;
}

/** ACP's statuses are a superset of the core's; the names are the same. */
const statusOf = (s: SessionStatus): string => s;

function orderOf(s: CheckoutSession, o: RenderOptions) {
  if (!s.orderId || s.status === 'complete_in_progress' || s.status === 'not_ready_for_payment')
    return undefined;
  const status =
    s.status === 'pending_approval' ? 'manual_review' : s.status === 'completed' ? 'confirmed' : 'canceled';
  return {
    id: s.orderId,
    checkout_session_id: s.id,
    permalink_url: o.permalink(s.id),
    ...(s.purchaseOrderNumber ? { client_reference_id: s.purchaseOrderNumber } : {}),
    status,
    line_items: s.lines.map((l) => ({
      id: lineId(l.item),
      title: l.name,
      product_id: l.sku,
      quantity: { ordered: l.quantity, current: status === 'canceled' ? 0 : l.quantity },
      unit_price: l.unitCents,
      subtotal: l.totalCents,
    })),
    totals: [total('total', 'Total', s.totals.totalCents)],
  };
}

/** A priced line as ACP's LineItem (a checkout's, and a cart's: "same structure as checkout"). */
export function lineItemOf(l: SessionLine, items: readonly SessionItem[]): Record<string, unknown> {
  return {
    id: lineId(l.item),
    // The id the platform named the item by (a merchant's variant id, or the SKU); `sku` is ours.
    item: { id: items[l.item]?.sku ?? l.sku },
    quantity: l.quantity,
    name: l.name,
    ...(l.unpriced ? {} : { unit_amount: l.unitCents }),
    sku: l.sku,
    totals: [
      total('items_base_amount', 'Base amount', l.baseCents),
      total('discount', 'Discount', l.discountCents),
      total('subtotal', 'Subtotal', l.totalCents),
      total('total', 'Total', l.totalCents),
    ],
  };
}

export function renderSession(s: CheckoutSession, o: RenderOptions): Record<string, unknown> {
  const discountsActive = s.extensions.includes('discount') || s.codes.length > 0;
  const order = orderOf(s, o);
  return {
    id: s.id,
    protocol: { version: ACP_VERSION },
    capabilities: {
      // Paid by purchase order (payment_data.purchase_order_number): no payment handler.
      payment: { handlers: [] },
      ...(s.extensions.includes('discount') ? { extensions: [DISCOUNT_EXTENSION] } : {}),
    },
    ...(s.buyer ? { buyer: s.buyer } : {}),
    status: statusOf(s.status),
    currency: s.currency.toLowerCase(),
    line_items: s.lines.map((l) => lineItemOf(l, s.items)),
    ...(s.fulfillment ? { fulfillment_details: s.fulfillment } : {}),
    fulfillment_options: [
      {
        type: 'shipping',
        id: FULFILLMENT_OPTION_ID,
        title: 'Delivery under your procurement terms',
        totals: [total('total', 'Delivery', 0)],
      },
    ],
    selected_fulfillment_options: s.lines.length
      ? [{ type: 'shipping', option_id: FULFILLMENT_OPTION_ID, item_ids: s.lines.map((l) => l.sku) }]
      : [],
    totals: [
      total('items_base_amount', 'Items', s.totals.baseCents),
      total('items_discount', 'Discounts', s.totals.discountCents),
      total('subtotal', 'Subtotal', s.totals.subtotalCents),
      total('total', 'Total', s.totals.totalCents),
    ],
    messages: messagesOf(s),
    links: o.links.map((l) => ({ type: l.type, url: l.url })),
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    expires_at: iso(s.expiresAt),
    ...(s.quote ? { quote_id: s.quote.id, quote_expires_at: s.quote.expiresAt } : {}),
    ...(discountsActive
      ? {
          discounts: {
            codes: [...s.codes],
            applied: s.discounts.map((d) => ({
              id: d.promotionId,
              ...(d.code ? { code: d.code } : {}),
              coupon: { id: d.promotionId, name: d.name },
              amount: d.amountCents,
              automatic: d.code === null,
              method: 'across',
              allocations: d.allocations.map((a) => ({
                path: jsonPath(['line_items', a.line]),
                amount: a.amountCents,
              })),
            })),
            rejected: s.rejected.map((r) => ({ code: r.code, reason: discountCode(r), message: r.message })),
          },
        }
      : {}),
    ...(order ? { order } : {}),
  };
}
