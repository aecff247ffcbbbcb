import { type CryptoKey, createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { type Clock, systemClock } from '../clock.ts';
import { type CartInput, cartHash } from './canonical-cart.ts';
import type { QuoteClaims } from './claims.ts';
import { QUOTE_TOKEN_LIFETIME_SECONDS } from './claims.ts';
import { QUOTE_TOKEN_ALG } from './key-store.ts';
import { QUOTE_TOKEN_TYP } from './sign.ts';

/** Why a quote token was refused: a stable code for machines, a detail for people. */
export type RefusalReason =
  | 'malformed'
  | 'alg_none'
  | 'alg_not_allowed'
  | 'wrong_type'
  | 'missing_kid'
  | 'unknown_kid'
  | 'keys_unavailable'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'invalid_claims'
  | 'cart_mismatch';

export type Verification =
  | { valid: true; kid: string; claims: QuoteClaims }
  | { valid: false; reason: RefusalReason; detail: string };

/** The public key for a kid, or undefined when the kid is unknown. */
export type KeyResolver = (kid: string) => Promise<CryptoKey | undefined>;

export interface VerifyOptions {
  keys: KeyResolver;
  issuer: string;
  audience: string;
  clock?: Clock;
}

/** Clock difference tolerated between the signing and the verifying process. */
const CLOCK_SKEW_MS = 60_000;

const refuse = (reason: RefusalReason, detail: string): Verification => ({ valid: false, reason, detail });

function claimFailure(err: errors.JWTClaimValidationFailed): Verification {
  switch (err.claim) {
    case 'iss':
      return refuse('wrong_issuer', 'the token was not issued by the expected issuer');
    case 'aud':
      return refuse('wrong_audience', 'the token is not meant for this audience');
    case 'nbf':
    case 'iat':
      return refuse('not_yet_valid', 'the token is dated in the future');
    default:
      return refuse('invalid_claims', `claim ${err.claim}: ${err.message}`);
  }
}

function hasQuoteShape(p: Record<string, unknown>): boolean {
  return (
    typeof p.cart_hash === 'string' &&
    typeof p.jti === 'string' &&
    typeof p.iat === 'number' &&
    typeof p.exp === 'number' &&
    p.exp - p.iat <= QUOTE_TOKEN_LIFETIME_SECONDS &&
    Array.isArray(p.lines) &&
    typeof p.totals === 'object' &&
    p.totals !== null
  );
}

/**
 * Payment's check of a quote token, instead of recalculating the price: the header names
 * ES256 and a known key (checked before any key is used, so `alg: none` and HS256 signed with
 * the public key — HS/ES confusion — are refused outright), the signature holds, the token is
 * unexpired, issued by the edge for this audience, and the presented cart hashes to the
 * token's `cart_hash`.
 */
export async function verifyQuoteToken(
  token: string,
  cart: CartInput,
  opts: VerifyOptions,
): Promise<Verification> {
  if (typeof token !== 'string' || token.split('.').length !== 3) {
    return refuse('malformed', 'a quote token is a compact JWS: three base64url parts separated by dots');
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return refuse('malformed', 'the token header is not base64url-encoded JSON');
  }
  const alg = String(header.alg ?? '');
  if (alg.toLowerCase() === 'none') return refuse('alg_none', 'unsigned tokens (alg "none") are refused');
  if (alg !== QUOTE_TOKEN_ALG) {
    return refuse(
      'alg_not_allowed',
      `alg ${JSON.stringify(alg)} is refused; quote tokens are signed ES256 only${alg.startsWith('HS') ? ' (an HMAC token made with the public key is a forgery)' : ''}`,
    );
  }
  if (header.typ !== QUOTE_TOKEN_TYP) return refuse('wrong_type', `typ must be "${QUOTE_TOKEN_TYP}"`);
  if (typeof header.kid !== 'string' || header.kid === '') {
    return refuse('missing_kid', 'the token header names no key (kid)');
  }
  let key: CryptoKey | undefined;
  try {
    key = await opts.keys(header.kid);
  } catch {
    return refuse('keys_unavailable', 'the signing keys could not be fetched; try again');
  }
  if (!key) return refuse('unknown_kid', `no current key has kid ${JSON.stringify(header.kid)}`);

  let claims: QuoteClaims;
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [QUOTE_TOKEN_ALG],
      issuer: opts.issuer,
      audience: opts.audience,
      typ: QUOTE_TOKEN_TYP,
      requiredClaims: ['iat', 'exp', 'jti'],
      currentDate: new Date((opts.clock ?? systemClock).now()),
    });
    if (!hasQuoteShape(payload)) return refuse('invalid_claims', 'the token does not carry a quote');
    claims = payload as unknown as QuoteClaims;
    // jose checks `iat` only against a maximum age; a token from the future is refused here.
    if (claims.iat * 1000 > (opts.clock ?? systemClock).now() + CLOCK_SKEW_MS) {
      return refuse('not_yet_valid', 'the token is dated in the future');
    }
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed) {
      return refuse(
        'bad_signature',
        'the signature does not match: the token was altered or not signed by us',
      );
    }
    if (err instanceof errors.JWTExpired)
      return refuse('expired', 'the quote token has expired; quote again');
    if (err instanceof errors.JWTClaimValidationFailed) return claimFailure(err);
    return refuse('malformed', err instanceof Error ? err.message : 'the token cannot be read');
  }
  if (cartHash(cart) !== claims.cart_hash) {
    return refuse('cart_mismatch', 'the presented cart is not the cart that was quoted');
  }
  return { valid: true, kid: header.kid, claims };
}

/** Payment's key source: the edge's /.well-known/jwks.json, cached and refetched on an unknown kid. */
export function remoteJwksKeys(url: URL): KeyResolver {
  const set = createRemoteJWKSet(url);
  return async (kid) => {
    try {
      return await set({ alg: QUOTE_TOKEN_ALG, kid }, undefined as never);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) return undefined;
      throw err;
    }
  };
}
