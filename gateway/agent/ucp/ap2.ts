import { createHash, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import { jcsText, withoutAp2 } from '../../../lib/ap2/canonical.ts';
import { verifyCheckoutMandate } from '../../../lib/ap2/checkout-mandate.ts';
import {
  signMerchantAuthorization,
  verifyMerchantAuthorization,
} from '../../../lib/ap2/merchant-authorization.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { CheckoutSession, OrderAuthorization } from '../../../subgraphs/procurement/checkout/session.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import { type UcpError, ucpError } from './errors.ts';
import type { PlatformProfile } from './platform-profile.ts';
import { AP2 } from './profile.ts';

/**
 * The AP2 mandates extension on the UCP checkout (ap2-mandates.md at v2026-04-08; docs/ap2.md),
 * the edge half: the rules (JCS, the detached JWS, the SD-JWT+kb) are protocol-neutral in
 * lib/ap2/. Negotiated like discount and fulfillment, and kept on the session's extensions when
 * it is created: from then on the session is "Security Locked", whatever a later request's
 * profile lists: every checkout response of it carries `ap2.merchant_authorization`, and only a
 * completion with a valid `ap2.checkout_mandate` completes it.
 */

/** Whether the session was created under AP2 (locked into the mandate flow). */
export const ap2Locked = (s: CheckoutSession): boolean => s.extensions.includes(AP2);

export interface Ap2Parts {
  readonly clock: Clock;
  /** The business's key that signs now (the UCP key ring that signs order webhooks). */
  signingKey(): Promise<{ readonly kid: string; readonly key: KeyObject }>;
  /**
   * The business's public keys still verifying (the profile's `signing_keys`); with `kid`, the
   * ring looked at again first when it does not hold that key.
   */
  verifyingKeys(kid?: string): Promise<readonly JWK[]>;
  /** The business profile's URL: the audience a mandate's key binding names. */
  readonly audience: string;
  /** Where a mandate is claimed while its completion runs (the idempotency store: shared by replicas). */
  readonly used: IdempotencyStore;
  /** How old the user's confirmation (the KB-JWT's iat) may be; below the store's retention. */
  readonly maxAgeS: number;
  /** What this process signed lately, a session at a time (signedCheckouts()); absent: none kept. */
  readonly signed?: SignedCheckouts;
}

/**
 * The latest checkout this process signed for each session: the SHA-256 of its JSON text as
 * sent (without `ap2`), the session version it rendered, and the signature. A checkout returned
 * unchanged (read again, or a business outcome that left the session as it was) reuses the
 * signature instead of canonicalising and signing again; the completion recognises the checkout
 * it signed inside a mandate (./ap2.ts verifyCompletion). One entry a session, bounded (~0.3 kB
 * each); another replica's checkouts are simply not found, and take the full path.
 */
export interface SignedCheckout {
  readonly version: number;
  readonly digest: string;
  readonly kid: string;
  readonly jws: string;
}
export type SignedCheckouts = LRUCache<string, SignedCheckout>;
export const signedCheckouts = (max = 4096): SignedCheckouts => new LRUCache({ max });

const textDigest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The checkout as sent: `ap2.merchant_authorization` over everything else (JCS), last member. */
export async function withMerchantAuthorization(
  checkout: Record<string, unknown>,
  p: Pick<Ap2Parts, 'signingKey'>,
): Promise<Record<string, unknown>> {
  const merchant_authorization = await signMerchantAuthorization(checkout, await p.signingKey());
  return { ...checkout, ap2: { merchant_authorization } };
}

/**
 * The checkout as sent, serialised once: its JSON text with `ap2.merchant_authorization` added as
 * the last member (the bytes JSON.stringify writes for `{...checkout, ap2}`), the signature over
 * the JCS of everything else. Issue 50: each signed answer serialised the checkout twice (the JCS,
 * then the body with `ap2`) and signed afresh; a checkout whose text this process already signed
 * for the session keeps its signature (the same text is the same JCS bytes). `checkout` must not
 * carry `ap2` (renderCheckout's never does).
 */
export async function signedCheckoutText(
  checkout: Record<string, unknown>,
  session: Pick<CheckoutSession, 'id' | 'version'>,
  p: Pick<Ap2Parts, 'signingKey' | 'signed'>,
): Promise<string> {
  const text = JSON.stringify(checkout);
  const signer = await p.signingKey();
  const digest = textDigest(text);
  const known = p.signed?.get(session.id);
  let jws: string;
  if (known && known.digest === digest && known.kid === signer.kid) {
    jws = known.jws;
    // A later version that renders the same text (an update that changed nothing the checkout
    // shows) is this signature's version too: signedHere then recognises it at completion.
    // Left at the first version (as before issue 50's follow-up), nothing was wrong, only slow:
    // signedHere's versions can only lag, so it answered undefined and the full check accepted
    // the same terms (a stale checkout stays refused either way: its text is not this version's,
    // and the full check compares its terms with the checkout now).
    if (session.version > known.version) p.signed?.set(session.id, { ...known, version: session.version });
  } else {
    jws = await signMerchantAuthorization(checkout, signer);
    p.signed?.set(session.id, { version: session.version, digest, kid: signer.kid, jws });
  }
  return `${text.slice(0, -1)}${text === '{}' ? '' : ','}"ap2":{"merchant_authorization":${JSON.stringify(jws)}}}`;
}

/**
 * Whether the checkout inside a mandate is, byte for byte, the one this process signed for this
 * session at its current version, with a key still among ours: its text without `ap2` has the
 * digest we kept and it carries the signature we made. Then our signature holds over it (we made
 * it over exactly these JCS bytes) and its terms are this version's, so neither needs the JCS
 * again. Anything else (another replica signed it, a later read signed other text, another key)
 * answers undefined, and verifyCompletion checks it in full.
 */
async function signedHere(
  checkout: Record<string, unknown>,
  session: CheckoutSession,
  p: Ap2Parts,
): Promise<{ readonly kid: string } | undefined> {
  const known = p.signed?.get(session.id);
  if (!known || known.version !== session.version || checkout.id !== session.id) return undefined;
  const ap2 = checkout.ap2 as { merchant_authorization?: unknown } | undefined;
  if (ap2?.merchant_authorization !== known.jws) return undefined;
  if (textDigest(JSON.stringify(withoutAp2(checkout))) !== known.digest) return undefined;
  if (!(await p.verifyingKeys(known.kid)).some((k) => k.kid === known.kid)) return undefined;
  return { kid: known.kid };
}

export type Ap2Verdict =
  | { readonly ok: true; readonly authorization: OrderAuthorization; release(): Promise<void> }
  | { readonly ok: false; readonly error: UcpError; readonly reason: string };

/** The checkout's terms the mandate must match now ("Verify Terms Match": id, totals, line items). */
const terms = (c: Record<string, unknown>) =>
  jcsText({ id: c.id, currency: c.currency, line_items: c.line_items, totals: c.totals });

const refused = (status: number, code: string, content: string, path?: string): Ap2Verdict => ({
  ok: false,
  error: ucpError(status, code, content, path ? { path } : {}),
  reason: `ap2: refused ${code}: ${content}`,
});

/**
 * "Business Verification" of a completion of a locked session: the mandate (lib/ap2), then our
 * own signature on the checkout inside it, its id and terms against the session now, and that
 * no other completion holds it now (its nonce binds it to this checkout, which completes once). Status codes (the tag gives codes, not statuses):
 * 400 for a missing mandate, 422 for a profile without a usable key, 403 for every mandate or
 * signature that does not authorize this completion. A mandate is claimed before the session
 * completes; `release()` frees it when the completion did not take the session with it (busy,
 * re-priced, a dependency missing: ./routes.ts).
 */
export async function verifyCompletion(
  body: { ap2?: unknown },
  session: CheckoutSession,
  /** The checkout as it stands now (rendered only when the mandate's is not the one signed here). */
  current: () => Record<string, unknown>,
  profile: PlatformProfile | undefined,
  p: Ap2Parts,
): Promise<Ap2Verdict> {
  const mandate =
    body.ap2 && typeof body.ap2 === 'object'
      ? (body.ap2 as { checkout_mandate?: unknown }).checkout_mandate
      : undefined;
  if (typeof mandate !== 'string' || mandate === '')
    return refused(
      400,
      'mandate_required',
      'AP2 was negotiated for this checkout: completion needs ap2.checkout_mandate.',
      '$.ap2.checkout_mandate',
    );
  // Not the tag's schema pattern, which refuses every SD-JWT+kb (lib/ap2/checkout-mandate.ts).
  const nowS = Math.floor(p.clock.now() / 1000);
  const m = await verifyCheckoutMandate(mandate, {
    issuerKeys: profile?.signingKeys ?? [],
    audience: p.audience,
    nonce: session.id,
    nowS,
    maxAgeS: p.maxAgeS,
  });
  if (!m.ok) return refused(m.code === 'agent_missing_key' ? 422 : 403, m.code, `${capital(m.reason)}.`);
  const merchant =
    (await signedHere(m.checkout, session, p)) ?? (await verifiedAgainstNow(m.checkout, session, current, p));
  if ('refusal' in merchant) return merchant.refusal;
  // Idempotency records are 43-character hashes (recordKey): a `:` never meets one of them.
  const key = `ap2-mandate:${m.hash}`;
  const now = p.clock.now();
  const claim = await p.used.begin(key, session.id, now);
  if (claim.kind !== 'started')
    return refused(
      403,
      'mandate_scope_mismatch',
      'The mandate was already presented for a completion; a mandate authorizes one.',
    );
  // The claim holds the mandate against a second presentation while this completion runs (in
  // this process, or across replicas with Redis), and lapses after IDEMPOTENCY_IN_FLIGHT_MS. No
  // durable "used" mark is written: it cost each completion a commit of its own before the
  // order's (the embedded store syncs each; issue 50's bench, docs/ap2.md "Cost"), and guarded
  // nothing the mandate does not: its key binding's nonce is this checkout, which completes once
  // (a second completion is 409), and its SHA-256 is kept with the order.
  const ap2 = m.checkout.ap2 as { merchant_authorization: string };
  return {
    ok: true,
    authorization: {
      kind: 'ap2_checkout_mandate',
      mandate,
      mandateSha256: m.hash,
      merchantAuthorization: ap2.merchant_authorization,
      merchantKid: merchant.kid,
      platformProfile: profile?.url ?? '',
      platformKid: m.kid,
      verifiedAt: now,
    },
    release: () => p.used.release(key),
  };
}

/** Our signature inside the mandate checked in full (JCS), its id and terms against the session now. */
async function verifiedAgainstNow(
  checkout: Record<string, unknown>,
  session: CheckoutSession,
  current: () => Record<string, unknown>,
  p: Ap2Parts,
): Promise<{ readonly kid: string } | { readonly refusal: Ap2Verdict }> {
  const merchant = await verifyMerchantAuthorization(checkout, (kid) => p.verifyingKeys(kid));
  if (!merchant.ok)
    return {
      refusal: merchant.missing
        ? refused(
            403,
            'merchant_authorization_missing',
            'The checkout in the mandate carries no ap2.merchant_authorization.',
          )
        : refused(
            403,
            'merchant_authorization_invalid',
            `The business authorization in the mandate: ${merchant.reason}.`,
          ),
    };
  if (checkout.id !== session.id)
    return { refusal: refused(403, 'mandate_scope_mismatch', 'The mandate is for another checkout.') };
  if (terms(checkout) !== terms(current()))
    return {
      refusal: refused(
        403,
        'mandate_scope_mismatch',
        'The checkout in the mandate differs from this checkout now (line items or totals).',
      ),
    };
  return { kid: merchant.kid };
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
