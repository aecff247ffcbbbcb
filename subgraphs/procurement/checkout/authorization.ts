/**
 * A purchase's proof of authorization, protocol-neutral: what the platform presented and what was
 * checked, so anyone holding the public keys can check it again later (docs/ap2.md).
 */
export interface OrderAuthorization {
  /** What it is: an AP2 checkout mandate (SD-JWT+kb) over a checkout this merchant signed. */
  readonly kind: 'ap2_checkout_mandate';
  /** The mandate as presented. */
  readonly mandate: string;
  /** SHA-256 of the mandate (base64url): what the completion's audit entry names. */
  readonly mandateSha256: string;
  /** This merchant's detached JWS over the checkout (the one inside the mandate). */
  readonly merchantAuthorization: string;
  readonly merchantKid: string;
  /** The platform whose key signed the mandate: its profile URL and the key's kid. */
  readonly platformProfile: string;
  readonly platformKid: string;
  /** When it was verified (epoch ms). */
  readonly verifiedAt: number;
}
