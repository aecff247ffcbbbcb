/**
 * A checkout API key: how an Agentic Commerce Protocol (ACP) agent platform authenticates to
 * this merchant (`Authorization: Bearer acp_…`). Each key acts as one procurement-agent SPIFFE
 * identity with a subset of the agent scopes, and may name where its order webhooks go.
 * Times are milliseconds since the Unix epoch.
 */
export interface CheckoutApiKey {
  /** `ak_` and 24 hex digits; public (listed, logged), never enough to authenticate. */
  readonly id: string;
  /** The platform's name, e.g. "ChatGPT" (1–100 characters). */
  readonly name: string;
  /** The agent identity the key acts as: a procurement-agent SPIFFE ID in a trusted domain. */
  readonly spiffeId: string;
  /** The agent_id its orders carry (the /v2 contract's agent_id). */
  readonly agentId: string;
  /** A subset of the agent scopes (orders:create, orders:read, orders:cancel, spend:read). */
  readonly scopes: readonly string[];
  readonly createdAt: number;
  /** The operator (token subject) who issued it. */
  readonly createdBy: string;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
  /** The last successful verification, to the minute (null: never used). */
  readonly lastUsedAt?: number | null;
  /** Where its order webhooks go; the signing secret itself is never part of the record. */
  readonly webhook: { readonly url: string; readonly secretSet: boolean } | null;
  /**
   * The UCP platform profile it may act for (`UCP-Agent`): a profile URL, or an origin for any
   * profile served there (profile-binding.ts). Null: unbound, accepted by ACP, refused by UCP.
   */
  readonly ucpProfile: string | null;
}

/** What an operator gives to issue a key (validated by validate.ts). */
export interface CheckoutApiKeyInput {
  readonly name: string;
  readonly spiffeId: string;
  readonly agentId: string;
  readonly scopes: readonly string[];
  /** A UCP platform profile URL or origin to bind it to; absent, null or blank: none. */
  readonly ucpProfile?: string | null;
}

export interface IssuedCheckoutApiKey {
  /** The secret key, `acp_<id>_<secret>`: shown this once, only its SHA-256 is stored. */
  readonly key: string;
  readonly apiKey: CheckoutApiKey;
}

/** A key's webhook as the sender needs it: the signing secret in clear (HMAC needs it). */
export interface CheckoutWebhookTarget {
  readonly url: string;
  readonly secret: string;
}
