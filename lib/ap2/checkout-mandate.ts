import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { decodeProtectedHeader, type JWK } from 'jose';
import { sha256b64url } from './canonical.ts';
import { ES_ALGS, esVerifier } from './ecdsa.ts';

/**
 * The checkout mandate a platform completes with (ap2-mandates.md at v2026-04-08, "Mandate
 * Structure", "Business Verification"): an SD-JWT (`dc+sd-jwt`, the format the business profile
 * advertises) with Key Binding, verified with the @sd-jwt library (SDJwtVcInstance: issuer
 * signature, disclosures against `_sd` digests, `iat`/`nbf`/`exp`, the KB-JWT's signature,
 * `typ: kb+jwt`, nonce and `sd_hash`). Around it, what the library leaves to the verifier:
 *
 * - the issuer key: the `kid` of the SD-JWT's header among the platform profile's
 *   `signing_keys` ("Platform Provider Flow"), the algorithm ES256/ES384/ES512 matching the key,
 *   checked before any key is used (`alg: none` never reaches a verifier);
 * - the holder key: the SD-JWT's `cnf.jwk` (RFC 7800); a mandate without one, or without a
 *   KB-JWT, is refused (the tag requires `+kb`);
 * - the KB-JWT's `aud` (the business, by its profile URL) and `iat` (at most `maxAgeS` old, at
 *   most the skew ahead), the `nonce` (the checkout id: the completion names it);
 * - no outbound fetch on the mandate's word: a `status` list or type metadata URL is not fetched
 *   (status lists are refused; type metadata is never loaded).
 *
 * The checkout is the SD-JWT's `checkout` claim (plain or selectively disclosed): the tag says
 * the mandate "MUST contain the full checkout response including `ap2.merchant_authorization`"
 * and leaves claim names to AP2; `checkout` is ours, written in docs/ap2.md.
 *
 * Not the tag's JSON Schema: `ap2_mandate.json`'s `checkout_mandate` pattern
 * (`^…\.…\.…(~…)*$`) allows no `.` after the first `~`, so it refuses every SD-JWT whose last
 * part is a KB-JWT (three dot-separated parts), i.e. every mandate the prose requires. The prose
 * is followed; the pattern is not applied (issue 50).
 */

/** The spec's refusal codes (ap2_mandate.json `error_code`) that mandate verification gives. */
export type MandateCode =
  | 'agent_missing_key'
  | 'mandate_invalid_signature'
  | 'mandate_expired'
  | 'mandate_scope_mismatch';

export type MandateCheck =
  | {
      readonly ok: true;
      /** The checkout the user confirmed (the mandate's `checkout`). */
      readonly checkout: Record<string, unknown>;
      /** SHA-256 of the mandate as presented (base64url): its identity for the replay guard. */
      readonly hash: string;
      /** The issuer key's kid (the platform's). */
      readonly kid: string;
      /** When it stops being usable (Unix s): its `exp`, or the KB-JWT's `iat` + maxAgeS. */
      readonly expiresAt: number;
      /** The KB-JWT's `aud` and `iat`: whom the user's confirmation was for, and when. */
      readonly audience: string;
      readonly confirmedAt: number;
    }
  | { readonly ok: false; readonly code: MandateCode; readonly reason: string };

export interface MandateExpectations {
  /** The platform's public keys (its profile's `signing_keys`). */
  readonly issuerKeys: readonly Record<string, unknown>[];
  /** The KB-JWT's `aud`: the business (its profile URL); undefined: not checked (offline evidence). */
  readonly audience: string | undefined;
  /** The KB-JWT's `nonce`: the checkout id. */
  readonly nonce: string;
  /** Now, Unix seconds. */
  readonly nowS: number;
  /** How old a KB-JWT (the user's confirmation) may be. Default 1 h. */
  readonly maxAgeS?: number;
  /** Clock skew allowed both ways. Default 60 s. */
  readonly skewS?: number;
}

/** Longest mandate read (a checkout of some hundred lines and its disclosures fit many times). */
export const MAX_MANDATE_CHARS = 48 * 1024;

const headerOf = (jwt: string): Record<string, unknown> | undefined => {
  try {
    return decodeProtectedHeader(jwt) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

const refuse = (code: MandateCode, reason: string): MandateCheck => ({ ok: false, code, reason });

export async function verifyCheckoutMandate(mandate: string, e: MandateExpectations): Promise<MandateCheck> {
  const maxAgeS = e.maxAgeS ?? 3600;
  const skewS = e.skewS ?? 60;
  if (mandate.length > MAX_MANDATE_CHARS)
    return refuse('mandate_invalid_signature', `the mandate is longer than ${MAX_MANDATE_CHARS} characters`);
  const parts = mandate.split('~');
  const issuerJwt = parts[0] ?? '';
  const kbJwt = parts.length > 1 ? (parts.at(-1) ?? '') : '';
  if (kbJwt === '')
    return refuse('mandate_invalid_signature', 'the mandate has no key binding JWT (SD-JWT+kb)');
  const header = headerOf(issuerJwt);
  const alg = typeof header?.alg === 'string' ? header.alg : '';
  if (!Object.hasOwn(ES_ALGS, alg))
    return refuse(
      'mandate_invalid_signature',
      `alg ${JSON.stringify(header?.alg)} is not ES256, ES384 or ES512`,
    );
  if (e.issuerKeys.length === 0)
    return refuse('agent_missing_key', 'the platform profile has no signing_keys');
  const jwk = e.issuerKeys.find((k) => k.kid === header?.kid);
  if (!jwk)
    return refuse(
      'agent_missing_key',
      `no key of the platform profile's signing_keys has kid ${JSON.stringify(header?.kid)}`,
    );
  const issuerVerify = esVerifier(jwk, alg);
  if (!issuerVerify)
    return refuse('agent_missing_key', `the profile key ${String(jwk.kid)} is not an EC key for ${alg}`);
  const kbAlg = headerOf(kbJwt)?.alg;
  const sdjwt = new SDJwtVcInstance({
    hasher: digest,
    verifier: issuerVerify,
    kbVerifier: (data, sig, payload) => {
      const cnf = (payload as { cnf?: { jwk?: Record<string, unknown> } }).cnf?.jwk;
      const v = cnf && typeof kbAlg === 'string' ? esVerifier(cnf, kbAlg) : undefined;
      if (!v) throw new Error('the mandate binds no usable holder key (cnf.jwk) for the KB-JWT alg');
      return v(data, sig);
    },
    // A status list would be fetched from a URL the mandate names: never on a caller's word.
    statusListFetcher: () => Promise.reject(new Error('status lists are not fetched')),
  });
  let verified: Awaited<ReturnType<SDJwtVcInstance['verify']>>;
  try {
    verified = await sdjwt.verify(mandate, {
      keyBindingNonce: e.nonce,
      currentDate: e.nowS,
      skewSeconds: skewS,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/expired/i.test(message)) return refuse('mandate_expired', 'the mandate has expired (exp)');
    if (/nonce/i.test(message))
      return refuse('mandate_scope_mismatch', 'the key binding nonce is not this checkout');
    return refuse('mandate_invalid_signature', `the mandate does not verify: ${message.slice(0, 200)}`);
  }
  const kb = verified.kb?.payload;
  if (!kb) return refuse('mandate_invalid_signature', 'the key binding JWT was not verified');
  if (e.audience !== undefined && kb.aud !== e.audience)
    return refuse('mandate_scope_mismatch', 'the key binding JWT is for another audience');
  if (typeof kb.iat !== 'number' || kb.iat > e.nowS + skewS)
    return refuse('mandate_invalid_signature', 'the key binding JWT is issued in the future');
  if (kb.iat + maxAgeS + skewS < e.nowS)
    return refuse('mandate_expired', `the user's confirmation (KB-JWT iat) is older than ${maxAgeS} s`);
  const payload = verified.payload as { checkout?: unknown; exp?: unknown };
  const checkout = payload.checkout;
  if (!checkout || typeof checkout !== 'object' || Array.isArray(checkout))
    return refuse('mandate_scope_mismatch', 'the mandate discloses no checkout');
  const exp = typeof payload.exp === 'number' ? payload.exp : Number.POSITIVE_INFINITY;
  return {
    ok: true,
    checkout: checkout as Record<string, unknown>,
    hash: sha256b64url(mandate),
    kid: String(jwk.kid),
    expiresAt: Math.min(exp, kb.iat + maxAgeS),
    audience: String(kb.aud),
    confirmedAt: kb.iat,
  };
}

export type { JWK };
