import { createHash } from 'node:crypto';

/** A cart as the caller presents it: the input of a quote, and what payment presents later. */
export interface CartInput {
  readonly lines: readonly { readonly sku: string; readonly quantity: number }[];
  readonly currency: string;
  readonly region: string;
  readonly customerSegment?: string | null | undefined;
  readonly customerId?: string | null | undefined;
  readonly coupons?: readonly string[] | null | undefined;
}

export interface CanonicalCart {
  currency: string;
  region: string;
  customerSegment: string | null;
  customerId: string | null;
  coupons: string[];
  lines: { sku: string; quantity: number }[];
}

/**
 * The one spelling of a cart that everything hashing it agrees on: lines sorted by SKU (the
 * order a frontend lists them in does not change the price), coupons trimmed, upper-cased
 * (promotions match codes case-insensitively), sorted and without repeats, absent optional
 * fields as null, keys in a fixed order.
 */
export function canonicalCart(cart: CartInput): CanonicalCart {
  const lines = cart.lines
    .map((l) => ({ sku: l.sku, quantity: l.quantity }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : a.quantity - b.quantity));
  return {
    currency: cart.currency,
    region: cart.region,
    customerSegment: cart.customerSegment ?? null,
    customerId: cart.customerId ?? null,
    coupons: [...new Set((cart.coupons ?? []).map((c) => c.trim().toUpperCase()))].sort(),
    lines,
  };
}

/**
 * The cart in one hidden class, whoever made it: the REST query's (optional fields left out),
 * GraphQL's coerced input, a checkout's, the catalog's one-line offers. V8 compiles the quote's
 * code for the classes it has seen, and a cart of a class it has not seen throws that code away
 * ("wrong map"); counted after ready, the quote's functions were thrown away there at their loads
 * of `cart.lines`, `cart.region` and `cart.currency` (docs/performance.md, "Second 0 counted").
 * Every field present, in one order; lines copied the same way.
 */
export function uniformCart(cart: CartInput): CartInput {
  return {
    lines: cart.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
    currency: cart.currency,
    region: cart.region,
    customerSegment: cart.customerSegment ?? undefined,
    customerId: cart.customerId ?? undefined,
    coupons: cart.coupons ?? undefined,
  };
}

/** SHA-256 (base64url) of the canonical cart's JSON: the quote's `id` and the token's `cart_hash`. */
export function cartHash(cart: CartInput): string {
  return createHash('sha256')
    .update(JSON.stringify(canonicalCart(cart)))
    .digest('base64url');
}

/** The limits of a cart, as schemas/openapi/edge.yaml states them for GET /cart/quote. */
export const CART_LIMITS = { maxLines: 50, maxQuantity: 999, maxCoupons: 10 } as const;

/**
 * What makes a cart unquotable, as JSON pointers: the same rules for the REST quote (checked
 * from its OpenAPI document) and the GraphQL `cartQuote`, so the two never disagree.
 */
export function cartViolations(cart: CartInput): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = [];
  if (cart.lines.length < 1 || cart.lines.length > CART_LIMITS.maxLines) {
    out.push({ pointer: '/lines', message: `a cart has 1 to ${CART_LIMITS.maxLines} lines` });
  }
  const seen = new Set<string>();
  cart.lines.forEach((l, i) => {
    if (!Number.isInteger(l.quantity) || l.quantity < 1 || l.quantity > CART_LIMITS.maxQuantity) {
      out.push({ pointer: `/lines/${i}/quantity`, message: `quantity is 1 to ${CART_LIMITS.maxQuantity}` });
    }
    if (seen.has(l.sku)) out.push({ pointer: `/lines/${i}/sku`, message: `${l.sku} appears more than once` });
    seen.add(l.sku);
  });
  if ((cart.coupons?.length ?? 0) > CART_LIMITS.maxCoupons) {
    out.push({ pointer: '/coupons', message: `at most ${CART_LIMITS.maxCoupons} coupons` });
  }
  return out;
}
