import { SignJWT } from 'jose';
import type { QuoteClaims } from './claims.ts';
import { QUOTE_TOKEN_ALG, type QuoteKeys } from './key-store.ts';

/** Explicit JWT type (RFC 8725 §3.11): a caller token can never pass as a quote token. */
export const QUOTE_TOKEN_TYP = 'quote+jwt';

/** Signs the claims with the active key; ES256 signatures are randomised, so two tokens differ. */
export async function signQuoteToken(
  keys: Pick<QuoteKeys, 'signingKey'>,
  claims: QuoteClaims,
): Promise<string> {
  const { kid, key } = keys.signingKey();
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: QUOTE_TOKEN_ALG, typ: QUOTE_TOKEN_TYP, kid })
    .sign(key);
}
