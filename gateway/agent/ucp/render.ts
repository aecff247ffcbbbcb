import { formatJsonPath as jsonPath } from '../../../lib/json/json-path.ts';
import {
  type CheckoutSession,
  orderPlaced,
  type RejectedCode,
  type SessionItem,
  type SessionLine,
  type SessionProblem,
} from '../../../subgraphs/procurement/checkout/session.ts';
import { lineItemId, missingSelections } from './fulfillment.ts';
import { AP2, BUYER_CONSENT, CHECKOUT, DISCOUNT, FULFILLMENT } from './profile.ts';
import { UCP_VERSION } from './schema/index.ts';

/**
 * A checkout session as UCP's checkout (shopping/checkout.json with the discount and fulfillment
 * extensions when negotiated): integer minor units, upper-case ISO 4217 currency, business
 * problems as `messages[]`, the negotiated capabilities and the payment handlers in `ucp`.
 * Every response the tests see is validated against the vendored schemas. Pure.
 */

export interface UcpRenderOptions {
  /** The payment handlers registry (./payment.ts). */
  readonly paymentHandlers: Record<string, unknown[]>;
  readonly links: readonly { readonly type: string; readonly url: string }[];
  /** Where the buyer reads the order: `<REST endpoint>/orders/<id>`. */
  readonly orderUrl: (orderId: string) => string;
  /** Where a person takes over (the console's approval card for the session's order). */
  readonly continueUrl: (s: CheckoutSession) => string;
}

/** Messages the edge adds for this answer only (a refused payment, a fulfillment selection). */
export interface ExtraMessage {
  readonly type: 'error' | 'warning' | 'info';
  readonly code: string;
  readonly path?: string;
  readonly content: string;
  readonly severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
}

type Msg = Record<string, unknown>;

/** The core's problem kinds as UCP error codes (error_code.json's vocabulary where it has one). */
export const UCP_CODE: Record<SessionProblem['kind'], string> = {
  unknown_sku: 'not_found',
  unpriced: 'item_unavailable',
  out_of_stock: 'out_of_stock',
  spend_refused: 'spend_limit_exceeded',
  approval_rejected: 'approval_rejected',
  approval_expired: 'approval_expired',
  order_cancelled: 'order_cancelled',
  price_changed: 'price_changed',
  promotions_unavailable: 'discount_unavailable',
  fallback_prices: 'fallback_prices',
  order_failed: 'order_failed',
};

/** A problem of the session (or cart) as a UCP message, its path into the request's line items. */
export function messageOf(p: SessionProblem): Msg {
  const path = p.item !== undefined ? { path: jsonPath(['line_items', p.item]) } : {};
  if (!p.blocking) return { type: 'info', code: UCP_CODE[p.kind], ...path, content: p.message };
  return { type: 'error', code: UCP_CODE[p.kind], ...path, content: p.message, severity: 'recoverable' };
}

const rejectedMessage = (r: RejectedCode): Msg => ({
  type: 'warning',
  code: `discount_code_${r.reason}`,
  path: jsonPath(['discounts', 'codes', r.index]),
  content: r.message,
});

export const total = (type: string, amount: number, display_text?: string) => ({
  type,
  ...(display_text ? { display_text } : {}),
  amount,
});

/** The capabilities active for a checkout response: checkout and its negotiated extensions. */
export function checkoutCapabilities(
  negotiated: ReadonlyMap<string, string>,
): Record<string, { version: string }[]> {
  const out: Record<string, { version: string }[]> = {};
  for (const name of [CHECKOUT, DISCOUNT, FULFILLMENT, BUYER_CONSENT]) {
    const v = negotiated.get(name);
    if (v) out[name] = [{ version: v }];
  }
  return out;
}

/** Whether completion waits for a fulfillment selection (the extension is on for this session). */
export const fulfillmentActive = (s: CheckoutSession): boolean => s.extensions.includes(FULFILLMENT);

/** UCP's status of a session, and whether it is escalated to a person. */
export function ucpStatus(s: CheckoutSession): string {
  switch (s.status) {
    case 'not_ready_for_payment':
      return 'incomplete';
    case 'ready_for_payment':
      return fulfillmentActive(s) && missingSelections(s.fulfillment).length > 0
        ? 'incomplete'
        : 'ready_for_complete';
    case 'complete_in_progress':
      return 'complete_in_progress';
    case 'pending_approval':
      return 'requires_escalation';
    case 'completed':
      return 'completed';
    case 'canceled':
    case 'expired':
      return 'canceled';
  }
}

/** A priced line as UCP's line item (checkout's, and cart's: "the same entity schemas"). */
export function lineItemOf(l: SessionLine, items: readonly SessionItem[]): Record<string, unknown> {
  return {
    id: lineItemId(l.item),
    // The id the platform named the item by (a merchant's variant id, or the SKU).
    item: { id: items[l.item]?.sku ?? l.sku, title: l.name, price: l.unitCents },
    quantity: l.quantity,
    totals: [
      total('subtotal', l.baseCents),
      ...(l.discountCents > 0 ? [total('items_discount', -l.discountCents, 'Discounts')] : []),
      total('total', l.totalCents),
    ],
  };
}

export function renderCheckout(
  s: CheckoutSession,
  negotiated: ReadonlyMap<string, string>,
  o: UcpRenderOptions,
  extra: readonly ExtraMessage[] = [],
): Record<string, unknown> {
  const status = ucpStatus(s);
  const discounts = s.extensions.includes(DISCOUNT);
  const messages: Msg[] = s.problems.map(messageOf);
  if (discounts || s.codes.length > 0) messages.push(...s.rejected.map(rejectedMessage));
  if (status === 'incomplete' && s.status === 'ready_for_payment')
    for (const m of missingSelections(s.fulfillment))
      messages.push({ type: 'error', code: 'missing', ...m, severity: 'recoverable' });
  if (status === 'requires_escalation')
    messages.push({
      type: 'error',
      code: 'approval_required',
      content:
        'The order waits for a person to approve it (the spend policy asks for approval above its threshold); continue_url opens the approval.',
      severity: 'requires_buyer_review',
    });
  if (s.status === 'expired')
    messages.push({
      type: 'info',
      code: 'expired',
      content: 'The checkout session expired before it was completed.',
    });
  messages.push(...extra.map((m) => ({ ...m })));
  const selected = fulfillmentActive(s) && missingSelections(s.fulfillment).length === 0;
  const order =
    s.orderId && orderPlaced(s) ? { id: s.orderId, permalink_url: o.orderUrl(s.orderId) } : undefined;
  return {
    ucp: {
      version: UCP_VERSION,
      status: 'success',
      // AP2 is the session's (locked at creation, gateway/agent/ucp/ap2.ts), not the request's.
      capabilities: {
        ...checkoutCapabilities(negotiated),
        ...(s.extensions.includes(AP2) ? { [AP2]: [{ version: negotiated.get(AP2) ?? UCP_VERSION }] } : {}),
      },
      payment_handlers: o.paymentHandlers,
    },
    id: s.id,
    status,
    currency: s.currency.toUpperCase(),
    line_items: s.lines.map((l) => lineItemOf(l, s.items)),
    ...(s.buyer ? { buyer: s.buyer } : {}),
    totals: [
      total('subtotal', s.totals.baseCents, 'Subtotal'),
      ...(s.totals.discountCents > 0 ? [total('items_discount', -s.totals.discountCents, 'Discounts')] : []),
      ...(selected ? [total('fulfillment', 0, 'Delivery')] : []),
      total('total', s.totals.totalCents, 'Total'),
    ],
    messages,
    links: o.links.map((l) => ({ type: l.type, url: l.url })),
    expires_at: new Date(s.expiresAt).toISOString(),
    ...(status === 'requires_escalation' ? { continue_url: o.continueUrl(s) } : {}),
    ...(fulfillmentActive(s) && s.fulfillment ? { fulfillment: s.fulfillment } : {}),
    ...(discounts
      ? {
          discounts: {
            codes: [...s.codes],
            applied: s.discounts.map((d) => ({
              ...(d.code ? { code: d.code } : {}),
              title: d.name,
              amount: d.amountCents,
              automatic: d.code === null,
              method: 'across',
              allocations: d.allocations.map((a) => ({
                path: jsonPath(['line_items', a.line]),
                amount: a.amountCents,
              })),
            })),
          },
        }
      : {}),
    ...(s.purchaseOrderNumber && order
      ? {
          payment: {
            instruments: [
              {
                id: 'po_1',
                handler_id: 'purchase_order',
                type: 'purchase_order',
                selected: true,
                display: { purchase_order_number: s.purchaseOrderNumber },
              },
            ],
          },
        }
      : {}),
    ...(order ? { order } : {}),
  };
}

/** A business outcome with no checkout (error_response.json): HTTP 200, `ucp.status: error`. */
export function errorResponse(
  messages: readonly ExtraMessage[],
  continueUrl?: string,
): Record<string, unknown> {
  return {
    ucp: { version: UCP_VERSION, status: 'error' },
    messages: messages.map((m) => ({ ...m })),
    ...(continueUrl ? { continue_url: continueUrl } : {}),
  };
}
