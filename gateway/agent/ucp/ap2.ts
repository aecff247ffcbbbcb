import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { jcs } from '../../../lib/ap2/canonical.ts';
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
  /** The business's public keys still verifying (the profile's `signing_keys`). */
  verifyingKeys(): Promise<readonly JWK[]>;
  /** The business profile's URL: the audience a mandate's key binding names. */
  readonly audience: string;
  /** Where a mandate is claimed while its completion runs (the idempotency store: shared by replicas). */
  readonly used: IdempotencyStore;
  /** How old the user's confirmation (the KB-JWT's iat) may be; below the store's retention. */
  readonly maxAgeS: number;
}

/** The checkout as sent: `ap2.merchant_authorization` over everything else (JCS), last member. */
export async function withMerchantAuthorization(
  checkout: Record<string, unknown>,
  p: Pick<Ap2Parts, 'signingKey'>,
): Promise<Record<string, unknown>> {
  const merchant_authorization = await signMerchantAuthorization(checkout, await p.signingKey());
  return { ...checkout, ap2: { merchant_authorization } };
}

export type Ap2Verdict =
  | { readonly ok: true; readonly authorization: OrderAuthorization; release(): Promise<void> }
  | { readonly ok: false; readonly error: UcpError; readonly reason: string };

/** The checkout's terms the mandate must match now ("Verify Terms Match": id, totals, line items). */
const terms = (c: Record<string, unknown>) =>
  jcs({ id: c.id, currency: c.currency, line_items: c.line_items, totals: c.totals }).toString('utf8');

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
  current: Record<string, unknown>,
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
  const merchant = await verifyMerchantAuthorization(m.checkout, await p.verifyingKeys());
  if (!merchant.ok)
    return merchant.missing
      ? refused(
          403,
          'merchant_authorization_missing',
          'The checkout in the mandate carries no ap2.merchant_authorization.',
        )
      : refused(
          403,
          'merchant_authorization_invalid',
          `The business authorization in the mandate: ${merchant.reason}.`,
        );
  if (m.checkout.id !== session.id)
    return refused(403, 'mandate_scope_mismatch', 'The mandate is for another checkout.');
  if (terms(m.checkout) !== terms(current))
    return refused(
      403,
      'mandate_scope_mismatch',
      'The checkout in the mandate differs from this checkout now (line items or totals).',
    );
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

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
