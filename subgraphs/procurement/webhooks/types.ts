export type EndpointStatus = 'active' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
/**
 * How deliveries to an endpoint are framed and signed: `standard-webhooks` (an operator's
 * endpoint: the CloudEvent, webhook-signature), `acp` (an agent platform's order webhook, one
 * per checkout API key: the ACP order event, Merchant-Signature) or `ucp` (a UCP platform's
 * order webhook, one per webhook URL: the UCP order, RFC 9421 by the business's key).
 */
export type EndpointScheme = 'standard-webhooks' | 'acp' | 'ucp';

/** A registered endpoint as operators see it (never its secret). */
export interface WebhookEndpoint {
  readonly endpointId: string;
  readonly url: string;
  readonly eventTypes: readonly string[];
  readonly description: string | null;
  readonly status: EndpointStatus;
  readonly disabledReason: string | null;
  readonly disabledAt: string | null;
  readonly createdAt: string;
  readonly scheme: EndpointScheme;
  /** The checkout API key an `acp` endpoint delivers for; null for an operator's endpoint. */
  readonly apiKeyId: string | null;
}

export interface WebhookDelivery {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly status: DeliveryStatus;
  /** Attempts since it was created or last replayed. */
  readonly attempts: number;
  readonly replays: number;
  readonly nextAttemptAt: string | null;
  readonly lastAttemptAt: string | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: string | null;
  readonly createdAt: string;
}

/** A delivery a worker claimed: what it needs to send one attempt. */
export interface ClaimedDelivery {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly payload: string;
  /** This attempt's number (1-based, since creation or the last replay). */
  readonly attempt: number;
  /** When the delivery was created (the event reached this system's webhooks): its delivery time runs from here. */
  readonly createdAt: Date;
  /** The claim's fence: an outcome is recorded only if no later claim took the delivery. */
  readonly claim: number;
  readonly url: string;
  /** The current secret, then the previous one while a rotation's grace period lasts. */
  readonly secrets: readonly string[];
  /** How the attempt is signed; absent: standard-webhooks. */
  readonly scheme?: EndpointScheme;
}

/** How one attempt ended. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly statusCode: number }
  | { readonly kind: 'retry'; readonly statusCode: number | null; readonly error: string; readonly at: Date }
  | { readonly kind: 'failed'; readonly statusCode: number | null; readonly error: string }
  /** 410 Gone: the receiver says the endpoint is gone for good. */
  | { readonly kind: 'gone'; readonly statusCode: 410 };
