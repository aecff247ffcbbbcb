/**
 * Quote tokens: the signed record of a quote that payment checks instead of recalculating
 * the price. Pure parts (canonical cart, claims, key ring) and thin adapters (key file, jose).
 */
export {
  type CanonicalCart,
  type CartInput,
  canonicalCart,
  cartHash,
  uniformCart,
} from './canonical-cart.ts';
export {
  type PriceSource,
  QUOTE_TOKEN_LIFETIME_SECONDS,
  type QuoteClaims,
  type QuoteFacts,
  quoteClaims,
  type TokenLine,
  type TokenTotals,
} from './claims.ts';
export {
  createQuoteTokens,
  type IssuedToken,
  type QuoteTokens,
  quoteKeysFile,
  quoteTokensFor,
} from './issuer.ts';
export { FileQuoteKeyStore, QUOTE_TOKEN_ALG, type QuoteKeys } from './key-store.ts';
export { QUOTE_TOKEN_TYP, signJws, signQuoteToken } from './sign.ts';
export {
  type KeyResolver,
  type RefusalReason,
  remoteJwksKeys,
  type Verification,
  type VerifyOptions,
  verifyQuoteToken,
} from './verify.ts';
