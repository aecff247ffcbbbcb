import type { CartInput } from './canonical-cart.ts';
import { cartHash } from './canonical-cart.ts';

/** Quote tokens live 15 minutes (the spec's "quote token lifetime"). */
export const QUOTE_TOKEN_LIFETIME_SECONDS = 15 * 60;

/** Where a quoted line's price came from (pricing behaviour 8). */
export type PriceSource = 'live' | 'cache' | 'last_known' | 'static';

/** One priced line as the token carries it; amounts are 2-decimal JSON numbers. */
export interface TokenLine {
  sku: string;
  quantity: number;
  basePrice: number;
  unitPrice: number;
  appliedModifiers: string[];
  source: PriceSource;
  /** unitPrice × quantity before promotions. */
  lineTotal: number;
  /** The line's share of the discounts. */
  discount: number;
  /** lineTotal − discount. */
  total: number;
}

export interface TokenTotals {
  subtotal: number;
  discountTotal: number;
  total: number;
}

/** What a token says about a quote, besides the registered claims. */
export interface QuoteFacts {
  currency: string;
  lines: TokenLine[];
  totals: TokenTotals;
  /** Promotions applied: id and amount. */
  promotions: { promotionId: string; amount: number }[];
  /** False when promotions could not be evaluated (the quote carries no discounts). */
  promotionsEvaluated: boolean;
}

/** The full claim set of a quote token. */
export interface QuoteClaims extends QuoteFacts {
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  /** cartHash() of the cart that was quoted. */
  cart_hash: string;
}

/**
 * The claims for a quote made at `nowMs`: pure, so the lifetime, the hash and the shape are
 * tested without keys or clocks.
 */
export function quoteClaims(
  cart: CartInput,
  facts: QuoteFacts,
  opts: { issuer: string; audience: string; nowMs: number; jti: string; cartHash?: string },
): QuoteClaims {
  const iat = Math.floor(opts.nowMs / 1000);
  return {
    iss: opts.issuer,
    aud: opts.audience,
    iat,
    exp: iat + QUOTE_TOKEN_LIFETIME_SECONDS,
    jti: opts.jti,
    cart_hash: opts.cartHash ?? cartHash(cart),
    ...facts,
  };
}
