import type { KeyObject } from 'node:crypto';
import { decodeProtectedHeader, type JWK } from 'jose';
import { jcsText, withoutAp2 } from './canonical.ts';
import { es256Sign, esVerifier } from './ecdsa.ts';

/**
 * The business's signature over a checkout (ap2-mandates.md at v2026-04-08, "Business
 * Authorization"): a JWS with detached content (RFC 7515 Appendix F), `<header>..<signature>`,
 * protected header `{alg, kid}` only, over the JCS bytes of the checkout without its `ap2`
 * member. What is signed, as read from the spec's prose and its `sign_checkout`: the whole
 * checkout response body the platform receives (its `ucp` envelope, messages, links and
 * expiry included), minus `ap2`; not a subset of "terms". So the platform and, later, anyone
 * holding the business's public key can check every member of what the user was shown.
 * ES256 signatures are randomized: the same checkout signed twice gives two values, both valid.
 * Signed and verified with node:crypto's synchronous ECDSA (./ecdsa.ts says why not jose's
 * WebCrypto); the tests check the result with jose's compactVerify.
 */

/** The algorithms a merchant authorization may name (the spec's list); anything else is refused unread. */
export const MERCHANT_AUTHORIZATION_ALGS = ['ES256', 'ES384', 'ES512'] as const;

const DETACHED = /^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/;

/**
 * The JWS signing input `<header>.<base64url(JCS)>` as bytes, written once into one buffer: the
 * payload's base64url text is made once and never concatenated into a string that is then copied
 * again (issue 50: the Buffer copies around JCS were ~10 kB of a signature's ~44 kB).
 */
function signingInput(header: string, checkout: Record<string, unknown>): Buffer {
  const payload = Buffer.from(jcsText(withoutAp2(checkout)), 'utf8').toString('base64url');
  const input = Buffer.allocUnsafe(header.length + 1 + payload.length);
  input.write(header, 0, 'latin1');
  input[header.length] = 0x2e; // '.'
  input.write(payload, header.length + 1, 'latin1');
  return input;
}

const headers = new Map<string, string>();
/** The protected header `{alg: ES256, kid}`, base64url, made once a kid. */
const es256Header = (kid: string): string => {
  let h = headers.get(kid);
  if (h === undefined) {
    h = Buffer.from(JSON.stringify({ alg: 'ES256', kid })).toString('base64url');
    if (headers.size < 64) headers.set(kid, h);
  }
  return h;
};

/** `ap2.merchant_authorization` for `checkout` (its `ap2`, if any, is not signed). */
export async function signMerchantAuthorization(
  checkout: Record<string, unknown>,
  signer: { readonly kid: string; readonly key: KeyObject },
): Promise<string> {
  const header = es256Header(signer.kid);
  return `${header}..${es256Sign(signingInput(header, checkout), signer.key)}`;
}

export type MerchantAuthorizationCheck =
  | { readonly ok: true; readonly kid: string }
  | { readonly ok: false; readonly missing: boolean; readonly reason: string };

/**
 * Whether `checkout.ap2.merchant_authorization` is a valid signature of one of `keys` (JWKs with
 * a `kid`) over the checkout without `ap2`: the spec's `verify_merchant_authorization`, with the
 * algorithm checked against the list and the key's own `alg` before any key is used (so `none`,
 * HMAC with a public key, or an algorithm the key was not made for never verify). `keys` may be
 * asked for with the header's `kid` (a key ring that reads a kid it does not hold yet).
 */
export async function verifyMerchantAuthorization(
  checkout: Record<string, unknown>,
  keys: readonly JWK[] | ((kid: string) => Promise<readonly JWK[]>),
): Promise<MerchantAuthorizationCheck> {
  const ap2 = checkout.ap2;
  const jws =
    ap2 && typeof ap2 === 'object'
      ? (ap2 as { merchant_authorization?: unknown }).merchant_authorization
      : undefined;
  if (typeof jws !== 'string') return { ok: false, missing: true, reason: 'no ap2.merchant_authorization' };
  if (!DETACHED.test(jws) || jws.length > 4096)
    return { ok: false, missing: false, reason: 'not a detached JWS (<header>..<signature>)' };
  const [header, , signature] = jws.split('.') as [string, string, string];
  let protectedHeader: { alg?: unknown; kid?: unknown };
  try {
    protectedHeader = decodeProtectedHeader(`${header}.e30.${signature}`);
  } catch {
    return { ok: false, missing: false, reason: 'the JWS header is not base64url JSON' };
  }
  const { alg, kid } = protectedHeader;
  // Nothing of RFC 7515 beyond alg and kid is understood: a `crit` (or b64: false) is refused, as
  // a verifier must (§4.1.11), not read as if absent.
  if ('crit' in protectedHeader || 'b64' in protectedHeader)
    return {
      ok: false,
      missing: false,
      reason: 'the JWS header asks for extensions (crit, b64) we do not support',
    };
  if (typeof alg !== 'string' || !(MERCHANT_AUTHORIZATION_ALGS as readonly string[]).includes(alg))
    return { ok: false, missing: false, reason: `alg ${JSON.stringify(alg)} is not ES256, ES384 or ES512` };
  const jwk =
    typeof kid === 'string'
      ? (typeof keys === 'function' ? await keys(kid) : keys).find((k) => k.kid === kid)
      : undefined;
  if (typeof kid !== 'string' || !jwk)
    return { ok: false, missing: false, reason: 'kid names no key of ours' };
  if (jwk.alg !== undefined && jwk.alg !== alg)
    return { ok: false, missing: false, reason: `the key ${kid} is ${jwk.alg}, not ${alg}` };
  const verify = esVerifier(jwk as Record<string, unknown>, alg);
  if (!verify) return { ok: false, missing: false, reason: `the key ${kid} is not an EC key for ${alg}` };
  return verify(signingInput(header, checkout), signature)
    ? { ok: true, kid }
    : { ok: false, missing: false, reason: 'the signature does not verify over this checkout' };
}
