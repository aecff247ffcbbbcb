import { sign as ecdsaSign, verify as ecdsaVerify, type KeyObject } from 'node:crypto';
import { publicKeyOf } from './public-keys.ts';

/**
 * JOSE's ECDSA (RFC 7518 §3.4: ES256/ES384/ES512, the signature as r||s) with node:crypto's
 * synchronous sign and verify, for the AP2 signatures: the platform's and the user's over a
 * mandate (./checkout-mandate.ts) and ours over a checkout (./merchant-authorization.ts).
 *
 * Not jose's CompactSign/compactVerify: jose 6 signs and verifies through WebCrypto, whose
 * `crypto.subtle` work runs in libuv's thread pool and answers in a later turn of the event
 * loop. Under load every such turn waits behind the other requests' work already queued: in
 * issue 50's trace of the UCP flows (docs/ap2.md, "Cost") the merchant authorization's sign
 * waited 19 ms and its verification 23 ms at the median of an overloaded run, where the
 * mandate's own verification (these functions, in the same request) took 0.6 ms; at a moderate
 * load they were the completion's two waits that a completion without AP2 does not have. The
 * synchronous calls also cost less CPU (sign ~35 µs against ~90 µs, verify ~80 µs against
 * ~120 µs, in process). jose still reads the headers (decodeProtectedHeader).
 */

export const ES_ALGS: Readonly<Record<string, { readonly crv: string; readonly hash: string }>> = {
  ES256: { crv: 'P-256', hash: 'sha256' },
  ES384: { crv: 'P-384', hash: 'sha384' },
  ES512: { crv: 'P-521', hash: 'sha512' },
};

/**
 * A verifier for one JWK and algorithm (`(signingInput, base64urlSignature) → valid`), or
 * undefined when the key is not an EC key of that algorithm's curve (or names another `alg`):
 * checked before the key is used, so `none`, HMAC or a key made for another curve never verify.
 */
export function esVerifier(jwk: Readonly<Record<string, unknown>>, alg: string) {
  const c = Object.hasOwn(ES_ALGS, alg) ? ES_ALGS[alg] : undefined;
  if (!c || jwk.kty !== 'EC' || jwk.crv !== c.crv || (jwk.alg !== undefined && jwk.alg !== alg))
    return undefined;
  let key: KeyObject;
  try {
    key = publicKeyOf(jwk);
  } catch {
    return undefined;
  }
  return (data: string | Buffer, sig: string): boolean => {
    try {
      return ecdsaVerify(
        c.hash,
        typeof data === 'string' ? Buffer.from(data) : data,
        { key, dsaEncoding: 'ieee-p1363' },
        Buffer.from(sig, 'base64url'),
      );
    } catch {
      return false;
    }
  };
}

/** An ES256 JWS signature (base64url r||s) of `signingInput` by a P-256 private key. */
export function es256Sign(signingInput: string | Buffer, key: KeyObject): string {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new TypeError('ES256 needs a P-256 private key');
  const data = typeof signingInput === 'string' ? Buffer.from(signingInput) : signingInput;
  return ecdsaSign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
}
