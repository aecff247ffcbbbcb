/**
 * The buyer's consent choices a platform passed with a checkout (UCP's buyer consent extension,
 * `dev.ucp.shopping.buyer_consent`: `buyer.consent` with four booleans), kept with the order and
 * carried by its events, so that a merchant's systems subscribed to the order webhook act on
 * them (a CRM adds a buyer who said yes to marketing, and no one else). Consent is declarative:
 * this system records and forwards it, it does not enforce it (buyer-consent.md, "Security &
 * Privacy Considerations"); a choice not given is absent, never assumed.
 */
export interface BuyerConsent {
  readonly analytics?: boolean;
  readonly preferences?: boolean;
  readonly marketing?: boolean;
  readonly sale_of_data?: boolean;
}

/** The extension's four choices, in its schema's order. */
export const CONSENT_KEYS = ['analytics', 'preferences', 'marketing', 'sale_of_data'] as const;

/**
 * The consent choices of `value` (the buyer's `consent` object): each of the four keys whose
 * value is a boolean, nothing else; null when none is given. Pure.
 */
export function consentOf(value: unknown): BuyerConsent | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const kept = CONSENT_KEYS.filter((k) => typeof v[k] === 'boolean').map((k) => [k, v[k] as boolean]);
  return kept.length > 0 ? Object.freeze(Object.fromEntries(kept) as BuyerConsent) : null;
}
