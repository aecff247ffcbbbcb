import type { JWK } from 'jose';
import { sha256b64url } from './canonical.ts';
import { verifyCheckoutMandate } from './checkout-mandate.ts';
import { verifyMerchantAuthorization } from './merchant-authorization.ts';

/**
 * The offline check of an order's authorization evidence (docs/ap2.md; GET
 * /api/v2/procurement/orders/{id}/authorization), with public keys only: the platform's (its
 * profile's `signing_keys`) and the business's (its profile's `signing_keys`). That
 * 1. the mandate is the one the evidence names (its SHA-256);
 * 2. it verifies as it did at completion (issuer signature by the platform key, disclosures, key
 *    binding with its nonce the checkout id), judged at the time it was verified;
 * 3. the checkout inside it carries the business's signature (the evidence's
 *    `merchant_authorization`) and is the order's checkout;
 * 4. the order is the one that checkout places (`orderIdOf`: the order id is derived from the
 *    checkout id, so no other checkout's mandate can be shown for it).
 * What it does not show: that the order's audit entry names the mandate; the audit proof does
 * (scripts/audit-prove-verify.ts joins the two).
 */

export type EvidenceVerdict =
  | {
      readonly ok: true;
      readonly orderId: string;
      readonly checkout: Record<string, unknown>;
      readonly platformKid: string;
      readonly merchantKid: string;
      /** Whom the user's confirmation was for (the KB-JWT's aud), and when (its iat, Unix s). */
      readonly audience: string;
      readonly confirmedAt: number;
      /** What the completion's audit entry says of it. */
      readonly auditReason: string;
    }
  | { readonly ok: false; readonly problem: string };

type Wire = {
  order_id?: unknown;
  checkout_session_id?: unknown;
  authorization?: {
    type?: unknown;
    checkout_mandate?: unknown;
    mandate_sha256?: unknown;
    merchant_authorization?: unknown;
    verified_at?: unknown;
    audit_reason?: unknown;
  } | null;
};

const fail = (problem: string): EvidenceVerdict => ({ ok: false, problem });

export async function verifyAuthorizationEvidence(
  evidence: unknown,
  keys: { readonly platform: readonly Record<string, unknown>[]; readonly business: readonly JWK[] },
  orderIdOf: (checkoutId: string) => string,
): Promise<EvidenceVerdict> {
  const e = (evidence ?? {}) as Wire;
  const a = e.authorization;
  if (!a) return fail('the order has no authorization evidence');
  if (a.type !== 'ap2_checkout_mandate') return fail(`unknown evidence type ${JSON.stringify(a.type)}`);
  const { checkout_mandate: mandate, merchant_authorization: merchant } = a;
  const sessionId = e.checkout_session_id;
  if (typeof mandate !== 'string' || typeof merchant !== 'string' || typeof sessionId !== 'string')
    return fail('the evidence lacks the mandate, the merchant authorization or the checkout id');
  if (sha256b64url(mandate) !== a.mandate_sha256) return fail('the mandate is not the one its SHA-256 names');
  const verifiedAt = Date.parse(String(a.verified_at));
  if (!Number.isFinite(verifiedAt)) return fail('verified_at is not a time');
  const m = await verifyCheckoutMandate(mandate, {
    issuerKeys: keys.platform,
    audience: undefined,
    nonce: sessionId,
    nowS: Math.floor(verifiedAt / 1000),
  });
  if (!m.ok) return fail(`the mandate does not verify (${m.code}: ${m.reason})`);
  const signed = await verifyMerchantAuthorization(m.checkout, keys.business);
  if (!signed.ok) return fail(`the checkout in the mandate is not the business's: ${signed.reason}`);
  if ((m.checkout.ap2 as { merchant_authorization?: unknown }).merchant_authorization !== merchant)
    return fail('the evidence names another merchant authorization than the mandate holds');
  if (m.checkout.id !== sessionId) return fail('the mandate is for another checkout');
  if (orderIdOf(sessionId) !== e.order_id) return fail('the order is not the one this checkout places');
  return {
    ok: true,
    orderId: String(e.order_id),
    checkout: m.checkout,
    platformKid: m.kid,
    merchantKid: signed.kid,
    audience: m.audience,
    confirmedAt: m.confirmedAt,
    auditReason: String(a.audit_reason ?? `ap2: mandate sha-256 ${a.mandate_sha256}`),
  };
}
