import type { SessionItem } from '../../../subgraphs/procurement/checkout/session.ts';
import { BUYER_CONSENT } from './profile.ts';

/**
 * UCP request bodies (already valid against the operation's view of the vendored schemas) as
 * the session core's commands. The merchant's own limits are the cart quote's: at most 50 line
 * items, a whole quantity of 1–999 each, at most 10 discount codes; an item may be on several lines
 * (each line its own id; priced as the cart quote prices the item once with their quantities'
 * sum: subgraphs/procurement/checkout/repeats.ts). Server-owned
 * fields a request may carry (`id`, `status`, `currency`, `totals`, `item.title`/`price`:
 * `ucp_request: omit`) are ignored, as the vendored README says the schemas cannot refuse them.
 */

export const MAX_LINES = 50;
export const MAX_QUANTITY = 999;
export const MAX_CODES = 10;

export interface UcpLimitError {
  readonly path: string;
  readonly content: string;
}

type Result<T> = { ok: true; value: T } | { ok: false; error: UcpLimitError };

export interface UcpCheckoutInput {
  readonly items: SessionItem[];
  /** Undefined when the request sent no `discounts.codes` (an update keeps the codes). */
  readonly codes?: string[];
  /** Undefined when not sent (an update keeps the buyer). */
  readonly buyer?: Record<string, unknown>;
  /** The request's `fulfillment` as sent; undefined when not sent. */
  readonly fulfillment?: unknown;
}

/** The line items of a checkout or cart request as the core's items, within the merchant's limits. */
export function lineItemsInput(body: Record<string, unknown>): Result<SessionItem[]> {
  const lines = (body.line_items ?? []) as { item: { id: string }; quantity: number }[];
  if (lines.length === 0)
    return { ok: false, error: { path: '$.line_items', content: 'At least one line item is required.' } };
  if (lines.length > MAX_LINES)
    return { ok: false, error: { path: '$.line_items', content: `At most ${MAX_LINES} line items.` } };
  const items: SessionItem[] = [];
  for (const [i, l] of lines.entries()) {
    if (l.quantity > MAX_QUANTITY)
      return {
        ok: false,
        error: { path: `$.line_items[${i}].quantity`, content: `A quantity is at most ${MAX_QUANTITY}.` },
      };
    items.push({ sku: l.item.id, quantity: l.quantity });
  }
  return { ok: true, value: items };
}

/**
 * `fromCart`: a create with `cart_id` (cart.md): the line items are the cart's, and the
 * request's own (overlapping) are ignored, unread; `items` is then empty.
 */
export function checkoutInput(body: Record<string, unknown>, fromCart = false): Result<UcpCheckoutInput> {
  const lines = fromCart ? { ok: true as const, value: [] } : lineItemsInput(body);
  if (!lines.ok) return lines;
  const items = lines.value;
  const discounts = body.discounts as { codes?: string[] } | undefined;
  const codes = discounts?.codes;
  if (codes && codes.length > MAX_CODES)
    return {
      ok: false,
      error: { path: '$.discounts.codes', content: `At most ${MAX_CODES} discount codes.` },
    };
  return {
    ok: true,
    value: {
      items,
      ...(codes ? { codes: [...codes] } : {}),
      ...(body.buyer !== undefined ? { buyer: body.buyer as Record<string, unknown> } : {}),
      ...(body.fulfillment !== undefined ? { fulfillment: body.fulfillment } : {}),
    },
  };
}

/**
 * The buyer as the session keeps it: `consent` (buyer_consent.json) only when the session
 * negotiated the buyer consent extension; else the business does not know the field and drops
 * it, as it drops discounts without the discount extension. Consent is kept as given (the
 * schema checked its booleans); the order keeps the known choices (domain/buyer-consent.ts).
 */
export function buyerOf(
  buyer: Record<string, unknown> | undefined,
  extensions: readonly string[],
): Record<string, unknown> | undefined {
  if (!buyer || !('consent' in buyer) || extensions.includes(BUYER_CONSENT)) return buyer;
  const { consent: _dropped, ...rest } = buyer;
  return rest;
}
