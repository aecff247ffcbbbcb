import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { CartInput } from '../../../lib/quote-token/index.ts';
import type { QuotedCart } from '../../../subgraphs/procurement/checkout/pricing.ts';
import type {
  CheckoutSession,
  NewSession,
  OrderAuthorization,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import type { OrderPort } from '../order/order-port.ts';
import type { RedemptionsPort } from './redemptions.ts';

/**
 * What the checkout session service (./service.ts) stands on and answers: its ports, its
 * commands and their outcomes. The service's commands live one per file beside it.
 */

/** The quote, as the edge's quote service gives it (gateway/edge/quote/service.ts). */
export interface CartQuoter {
  quote(cart: CartInput): Promise<{
    lines: QuotedCart['lines'];
    subtotal: number;
    discountTotal: number;
    total: number;
    promotions: QuotedCart['promotions'];
    quoteToken: string;
    expiresAt: string;
    /** Units in stock of each line's product when it was priced; absent: stock is not checked. */
    inventoryLevels?: readonly number[];
  }>;
  /**
   * Units in stock of each SKU now (undefined for an unknown one), for the completion's re-check;
   * absent: the completion trusts the stock its quote saw.
   */
  inventoryLevels?(skus: readonly string[], currency: string): Promise<(number | undefined)[]>;
  /**
   * The SKU each item id names: a SKU names itself, a merchant's own variant id (its feed's)
   * the SKU the catalog gave it; undefined when the catalog has neither. Absent: SKUs only.
   */
  resolveItems?(ids: readonly string[]): Promise<(string | undefined)[]>;
}

export interface CheckoutDeps {
  readonly store: CheckoutSessionStore;
  readonly quoter: CartQuoter;
  readonly orders: OrderPort;
  readonly spend: {
    readonly ledger: SpendLedger;
    readonly withoutPolicy: 'allow' | 'deny';
    /** Counted when a line's SKU is refused here, before the ledger (which counts its own refusals). */
    readonly refused?: (reason: 'sku-not-allowed') => void;
  };
  /** Where a completion records the promotions it used (absent: none are recorded). */
  readonly redemptions?: RedemptionsPort;
  readonly clock: Clock;
  readonly log: Logger;
  /** How long an open session lives (ACP_SESSION_TTL_SECONDS). */
  readonly sessionTtlMs: number;
  /**
   * How long a completion holds its session (IDEMPOTENCY_IN_FLIGHT_MS: it outlasts any call to
   * the order domain); after it another completion resumes it, or a read settles it.
   */
  readonly completionHoldMs?: number;
}

/** The catalog, the store or the order domain cannot answer now: 503, nothing changed. */
export class CheckoutUnavailable extends Error {
  override name = 'CheckoutUnavailable';
}

export type Outcome =
  /** `replayed`: a completion's same request again, answered by the session it completed. */
  | { readonly kind: 'ok'; readonly session: CheckoutSession; readonly replayed?: true }
  | { readonly kind: 'not-found' }
  /** The session's status does not allow this (completed, canceled, expired, pending approval): 405. */
  | { readonly kind: 'not-allowed'; readonly session: CheckoutSession }
  /** Completion of a session with blocking messages: 400 naming them. */
  | { readonly kind: 'not-ready'; readonly session: CheckoutSession }
  /** Another change of the same session is under way (a completion placing its order): 409. */
  | { readonly kind: 'busy'; readonly session: CheckoutSession };

/** A new session as the protocol edge asks for it: the core's NewSession, its id and lifetime ours. */
export interface CreateCommand extends Omit<NewSession, 'id' | 'owner' | 'ttlMs'> {
  readonly owner: SpiffeId;
  /**
   * The session's id when the caller derives it from its request (ACP: from the Idempotency-Key
   * and the body, as the `/v2` order's id is from its key), so that the same request after a
   * crash meets the session it created instead of making a second one. A new random id else.
   */
  readonly id?: string;
  /**
   * With `id`: how long a session found under it counts as this request's twin (the
   * idempotency store's reply lifetime). An older one was another request under a key used
   * again after its record expired: this one gets a new random id.
   */
  readonly replayWithinMs?: number;
}

/** A create's outcome: the new session, or (same derived id, same owner) the one made before. */
export interface Created {
  readonly session: CheckoutSession;
  readonly existing: boolean;
}

export interface CompleteCommand {
  readonly purchaseOrderNumber: string;
  readonly traceId: string;
  readonly buyer?: Record<string, unknown> | null;
  /** The request's idempotency record (CheckoutSession.completedBy); absent: none is kept. */
  readonly record?: string;
  /** The user's authorization the edge verified (an AP2 mandate), kept with the order. */
  readonly authorization?: OrderAuthorization;
  /** ACP: the completion's `payment_data` as given (kept with the order; docs/acp.md). */
  readonly paymentData?: Readonly<Record<string, unknown>>;
  /**
   * The session version the authorization was verified against: a change since (a concurrent
   * update) answers busy instead of completing terms the user did not confirm.
   */
  readonly authorizedVersion?: number;
  /**
   * The warm-up's rehearsal (gateway/agent/rehearsal.ts, issue 48): every step runs, the order's
   * statements are rolled back, and what the completion reserved and redeemed is given back.
   */
  readonly rehearsal?: true;
}

/** `completedBy` of a session mended at start: the request that completed it is not known. */
export const RECOVERED = 'recovered-at-start';
