import { sign } from 'node:crypto';
import type { QuoteClaims } from './claims.ts';
import { QUOTE_TOKEN_ALG, type QuoteKeys } from './key-store.ts';

/** Explicit JWT type (RFC 8725 §3.11): a caller token can never pass as a quote token. */
export const QUOTE_TOKEN_TYP = 'quote+jwt';

const b64url = (text: string) => Buffer.from(text).toString('base64url');
const headers = new Map<string, string>();

/**
 * Signs a JSON payload with the active key as a compact JWS (RFC 7515) of type `typ`: ES256 is
 * ECDSA P-256 over SHA-256 with the raw r‖s signature (`ieee-p1363`), as RFC 7518 §3.4
 * requires. Node's synchronous sign is used rather than WebCrypto's job queue: it is on every
 * quote's path. ES256 signatures are randomised, so two tokens of one quote differ.
 * Verification uses jose. Quote tokens and the audit's checkpoints both sign here.
 */
export function signJws(keys: Pick<QuoteKeys, 'signingKey'>, typ: string, payload: unknown): string {
  const { kid, key } = keys.signingKey();
  const cacheKey = `${typ}\0${kid}`;
  let header = headers.get(cacheKey);
  if (!header) {
    header = b64url(JSON.stringify({ alg: QUOTE_TOKEN_ALG, typ, kid }));
    headers.set(cacheKey, header);
  }
  const input = `${header}.${b64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A quote token: the claims signed with the active quote key, type `quote+jwt`. */
export const signQuoteToken = (keys: Pick<QuoteKeys, 'signingKey'>, claims: QuoteClaims): string =>
  signJws(keys, QUOTE_TOKEN_TYP, claims);
