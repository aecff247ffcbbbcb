import { CART_LIMITS } from '../../../lib/quote-token/canonical-cart.ts';
import type { SessionChange, SessionItem } from '../../../subgraphs/procurement/checkout/session.ts';
import { AcpError, acpError } from './errors.ts';
import { FULFILLMENT_OPTION_ID } from './render.ts';
import { formatJsonPath as jsonPath } from './schema/index.ts';

/**
 * ACP request bodies (already valid against the vendored bundle, contract.ts) → the session
 * core's commands, with this merchant's own limits: the cart quote's (50 lines, 999 units a
 * line, 10 codes), one line per SKU, its currencies, its single fulfilment option, and payment
 * by purchase order only. Each refusal names its field as a JSONPath. Pure.
 */

type Body = Record<string, unknown>;
type Result<T> = { ok: true; value: T } | { ok: false; error: AcpError };

export interface AcpRequestLimits {
  /** Lower-case ISO 4217 codes (ACP_CURRENCIES). */
  readonly currencies: readonly string[];
  readonly defaultRegion: string;
}

const REGION = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const MAX_ID = 64;
const MAX_CODE = 64;
const MAX_PO_NUMBER = 100;

const refuse = <T>(code: string, message: string, param: string): Result<T> => ({
  ok: false,
  error: acpError(400, code, message, param),
});

export function itemsOf(body: Body): Result<SessionItem[] | undefined> {
  const raw = body.line_items as { id: string; quantity?: number }[] | undefined;
  if (raw === undefined) return { ok: true, value: undefined };
  if (raw.length > CART_LIMITS.maxLines)
    return refuse(
      'too_many_items',
      `A session holds at most ${CART_LIMITS.maxLines} line items.`,
      '$.line_items',
    );
  // An item may be on several lines (subgraphs/procurement/checkout/repeats.ts), as in UCP.
  const items: SessionItem[] = [];
  for (const [i, it] of raw.entries()) {
    if (it.id.length === 0 || it.id.length > MAX_ID)
      return refuse(
        'invalid',
        `An item id has 1 to ${MAX_ID} characters.`,
        jsonPath(['line_items', i, 'id']),
      );
    const quantity = it.quantity ?? 1;
    if (quantity > CART_LIMITS.maxQuantity)
      return refuse(
        'quantity_exceeded',
        `At most ${CART_LIMITS.maxQuantity} units of one item.`,
        jsonPath(['line_items', i, 'quantity']),
      );
    items.push({ sku: it.id, quantity });
  }
  return { ok: true, value: items };
}

/** `discounts.codes`, or the deprecated `coupons` alias (the discount extension, §6.1). */
function codesOf(body: Body): Result<string[] | undefined> {
  const fromDiscounts = (body.discounts as { codes?: string[] } | undefined)?.codes;
  const codes = fromDiscounts ?? (body.coupons as string[] | undefined);
  if (codes === undefined) return { ok: true, value: undefined };
  const where = fromDiscounts ? ['discounts', 'codes'] : ['coupons'];
  if (codes.length > CART_LIMITS.maxCoupons)
    return refuse('too_many_codes', `At most ${CART_LIMITS.maxCoupons} discount codes.`, jsonPath(where));
  const long = codes.findIndex((c) => c.length > MAX_CODE);
  if (long >= 0)
    return refuse(
      'invalid',
      `A discount code has at most ${MAX_CODE} characters.`,
      jsonPath([...where, long]),
    );
  return { ok: true, value: codes };
}

/** The pricing region: the fulfilment address's country (upper case), else the default. */
function regionOf(body: Body): Result<string | undefined> {
  const details = body.fulfillment_details as { address?: { country: string } } | undefined;
  if (!details) return { ok: true, value: undefined };
  const country = details.address?.country;
  if (country === undefined) return { ok: true, value: undefined };
  if (!REGION.test(country))
    return refuse(
      'invalid',
      'The country is an ISO 3166-1 code such as US.',
      '$.fulfillment_details.address.country',
    );
  return { ok: true, value: country.toUpperCase() };
}

const objectOrNull = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' ? (JSON.parse(JSON.stringify(v)) as Record<string, unknown>) : null;

export interface CreateInput {
  readonly items: SessionItem[];
  readonly codes: string[];
  readonly currency: string;
  readonly region: string;
  readonly buyer: Record<string, unknown> | null;
  readonly fulfillment: Record<string, unknown> | null;
  readonly extensions: string[];
}

export function createInput(body: Body, limits: AcpRequestLimits): Result<CreateInput> {
  const currency = String(body.currency).toLowerCase();
  if (!limits.currencies.includes(currency))
    return refuse(
      'unsupported_currency',
      `This merchant sells in ${limits.currencies.join(', ')}.`,
      '$.currency',
    );
  const items = itemsOf(body);
  if (!items.ok) return items;
  const codes = codesOf(body);
  if (!codes.ok) return codes;
  const region = regionOf(body);
  if (!region.ok) return region;
  const asked = (body.capabilities as { extensions?: unknown[] } | undefined)?.extensions ?? [];
  return {
    ok: true,
    value: {
      items: items.value ?? [],
      codes: codes.value ?? [],
      currency: currency.toUpperCase(),
      region: region.value ?? limits.defaultRegion,
      buyer: objectOrNull(body.buyer),
      fulfillment: objectOrNull(body.fulfillment_details),
      // Only the extensions this merchant speaks become active (the intersection).
      extensions: asked.some((e) => e === 'discount' || (e as { name?: unknown })?.name === 'discount')
        ? ['discount']
        : [],
    },
  };
}

export function updateInput(body: Body): Result<SessionChange> {
  const items = itemsOf(body);
  if (!items.ok) return items;
  const codes = codesOf(body);
  if (!codes.ok) return codes;
  const region = regionOf(body);
  if (!region.ok) return region;
  const selected = (body.selected_fulfillment_options as { option_id: string }[] | undefined) ?? [];
  const wrong = selected.findIndex((o) => o.option_id !== FULFILLMENT_OPTION_ID);
  if (wrong >= 0)
    return refuse(
      'invalid',
      `The only fulfilment option is ${FULFILLMENT_OPTION_ID}.`,
      jsonPath(['selected_fulfillment_options', wrong, 'option_id']),
    );
  if (items.value?.length === 0)
    return refuse('missing', 'A session has at least one line item.', '$.line_items');
  return {
    ok: true,
    value: {
      ...(items.value ? { items: items.value } : {}),
      ...(codes.value ? { codes: codes.value } : {}),
      ...(body.buyer !== undefined ? { buyer: objectOrNull(body.buyer) } : {}),
      ...(body.fulfillment_details !== undefined
        ? { fulfillment: objectOrNull(body.fulfillment_details) }
        : {}),
      ...(region.value ? { region: region.value } : {}),
    },
  };
}

export interface CompleteInput {
  readonly purchaseOrderNumber: string;
  readonly buyer?: Record<string, unknown> | null;
  /** `payment_data` as the platform gave it (the bundle's schema checked it), kept with the order. */
  readonly paymentData: Readonly<Record<string, unknown>>;
}

/**
 * Bound of the `payment_data` kept with an order, as JSON text: a purchase-order payment (number,
 * terms, due date, approval_required, a billing address) takes a few hundred bytes.
 */
export const MAX_PAYMENT_DATA_BYTES = 4096;

/**
 * Payment by purchase order only (`payment_data.purchase_order_number`, with `payment_terms`):
 * this merchant takes no card or delegated payment, so a `handler_id` is refused by name.
 */
export function completeInput(body: Body): Result<CompleteInput> {
  const pay = body.payment_data as { handler_id?: string; purchase_order_number?: string };
  if (pay.handler_id !== undefined)
    return refuse(
      'unsupported_payment_handler',
      'This merchant takes no payment handler: pay on account with payment_data.purchase_order_number.',
      '$.payment_data.handler_id',
    );
  const po = pay.purchase_order_number ?? '';
  if (po.trim().length === 0 || po.length > MAX_PO_NUMBER)
    return refuse(
      'invalid',
      `A purchase order number has 1 to ${MAX_PO_NUMBER} characters.`,
      '$.payment_data.purchase_order_number',
    );
  if (Buffer.byteLength(JSON.stringify(pay)) > MAX_PAYMENT_DATA_BYTES)
    return refuse(
      'invalid',
      `payment_data is kept with the order: at most ${MAX_PAYMENT_DATA_BYTES} bytes of JSON.`,
      '$.payment_data',
    );
  return {
    ok: true,
    value: {
      purchaseOrderNumber: po,
      paymentData: pay,
      ...(body.buyer !== undefined ? { buyer: objectOrNull(body.buyer) } : {}),
    },
  };
}

export { AcpError };
