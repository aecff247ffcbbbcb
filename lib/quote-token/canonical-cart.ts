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
 * order a frontend lists them in does not change the price), coupons sorted and without
 * repeats, absent optional fields as null, keys in a fixed order.
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
    coupons: [...new Set(cart.coupons ?? [])].sort(),
    lines,
  };
}

/** SHA-256 (base64url) of the canonical cart's JSON: the quote's `id` and the token's `cart_hash`. */
export function cartHash(cart: CartInput): string {
  return createHash('sha256')
    .update(JSON.stringify(canonicalCart(cart)))
    .digest('base64url');
}
