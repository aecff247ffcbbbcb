import { createHash, randomUUID } from 'node:crypto';

/**
 * The checkout session: what an agent platform builds before it buys, priced by this merchant
 * and completed as one purchase order. Protocol-neutral: the ACP edge (gateway/agent/acp/)
 * renders it as ACP's CheckoutSession, and UCP's will render the same record. Amounts are
 * integer minor units (cents); pure functions, no I/O (docs/acp.md, "The session core").
 */

/**
 * - `not_ready_for_payment` while a blocking message stands (unknown SKU, no price, a refusal);
 * - `ready_for_payment` when every line is priced;
 * - `complete_in_progress` while a completion places its order (updates wait; a completion
 *   that died here is resumed by the next one, since the order id is the session's);
 * - `pending_approval`: the order waits for an operator (the spend policy's approvalAbove);
 * - `completed`, `canceled`, `expired`: final.
 */
export type SessionStatus =
  | 'not_ready_for_payment'
  | 'ready_for_payment'
  | 'complete_in_progress'
  | 'pending_approval'
  | 'completed'
  | 'canceled'
  | 'expired';

export const FINAL_STATUSES: ReadonlySet<SessionStatus> = new Set(['completed', 'canceled', 'expired']);

/** What the agent asked for: a SKU and a whole quantity. */
export interface SessionItem {
  readonly sku: string;
  readonly quantity: number;
}

/**
 * One line per item, in the items' order (so `$.line_items[i]` is the same line in a request, a
 * message and an allocation), in cents: base = unit × quantity, total = base − discount. An item
 * that could not be priced has a line marked `unpriced` with zero amounts (its message says why).
 */
export interface SessionLine {
  /** Index into `items` (the same as the line's own index). */
  readonly item: number;
  /** Set on the line of an item that could not be priced (absent on every priced line). */
  readonly unpriced?: true;
  readonly sku: string;
  readonly name: string;
  readonly quantity: number;
  readonly unitCents: number;
  readonly baseCents: number;
  readonly discountCents: number;
  readonly totalCents: number;
}

/** A promotion that applied; allocations name lines by their index in `lines`. */
export interface SessionDiscount {
  readonly promotionId: string;
  readonly name: string;
  /** The code that unlocked it; null for an automatic promotion. */
  readonly code: string | null;
  readonly amountCents: number;
  readonly allocations: readonly { readonly line: number; readonly amountCents: number }[];
}

/** Why a discount code did not apply (the discount extension's reasons, protocol-neutral). */
export type CodeRejection =
  | 'expired'
  | 'invalid'
  | 'usage_limit_reached'
  | 'combination_disallowed'
  | 'minimum_not_met'
  | 'already_applied';

export interface RejectedCode {
  /** Index into `codes`. */
  readonly index: number;
  readonly code: string;
  readonly reason: CodeRejection;
  readonly message: string;
}

/**
 * A business problem of the session, shown to the agent as a message with a path into its
 * request (`item`/`code` indexes). `blocking` problems keep it `not_ready_for_payment`.
 */
export interface SessionProblem {
  readonly kind:
    | 'unknown_sku'
    | 'unpriced'
    | 'out_of_stock'
    | 'spend_refused'
    | 'approval_rejected'
    | 'approval_expired'
    | 'order_cancelled'
    | 'price_changed'
    | 'promotions_unavailable'
    | 'fallback_prices'
    | 'order_failed';
  readonly message: string;
  readonly blocking: boolean;
  readonly item?: number;
}

export interface SessionTotals {
  readonly baseCents: number;
  readonly discountCents: number;
  readonly subtotalCents: number;
  readonly totalCents: number;
}

/** The pricing a session got from the cart quote (GET /cart/quote's flow), already in cents. */
export interface SessionPricing {
  readonly lines: readonly SessionLine[];
  readonly discounts: readonly SessionDiscount[];
  readonly rejected: readonly RejectedCode[];
  readonly problems: readonly SessionProblem[];
  readonly totals: SessionTotals;
  /** The signed quote token's `jti` and expiry: the prices hold until then (the token itself is not kept). */
  readonly quote: { readonly id: string; readonly expiresAt: string } | null;
}

/**
 * Where the platform that created a session is reached (UCP: its profile, and the order webhook
 * URL from the profile's `dev.ucp.shopping.order` config), fixed at create. ACP sessions have
 * none: their platform is the API key's.
 */
export interface SessionChannel {
  readonly protocol: 'ucp';
  readonly profileUrl: string;
  readonly orderWebhookUrl?: string;
}

export interface CheckoutSession extends SessionPricing {
  readonly id: string;
  /** Which protocol created it: its responses are rendered by that protocol's edge. */
  readonly protocol: 'acp' | 'ucp';
  /** The SPIFFE ID of the agent identity that owns it; anyone else gets 404. */
  readonly owner: string;
  /** The agent_id its order carries. */
  readonly agentId: string;
  /** The API key that created it (webhooks go to that key's platform); null for other identities. */
  readonly keyId: string | null;
  /** The platform's channel (UCP); absent on ACP sessions and on sessions stored before it existed. */
  readonly channel?: SessionChannel | null;
  readonly status: SessionStatus;
  /** ISO 4217, upper case (the protocols choose their own case on the wire). */
  readonly currency: string;
  /** The pricing region: the fulfilment address's country, else the configured default. */
  readonly region: string;
  readonly items: readonly SessionItem[];
  /** Discount codes as the agent sent them (replaced, not merged, by an update). */
  readonly codes: readonly string[];
  /** Protocol extensions the agent asked for and this merchant speaks (e.g. ACP's `discount`). */
  readonly extensions: readonly string[];
  /** Protocol-specific blobs kept as sent and echoed back (buyer, fulfilment details). */
  readonly buyer: Readonly<Record<string, unknown>> | null;
  readonly fulfillment: Readonly<Record<string, unknown>> | null;
  /** The order the completion placed (its id is fixed by the session id: orderIdOfSession). */
  readonly orderId: string | null;
  /** The purchase order number the agent paid with. */
  readonly purchaseOrderNumber: string | null;
  /**
   * While `complete_in_progress`: until when the completion that set it holds the session (epoch
   * ms). Another completion waits (409) until then; after it, the next one resumes or settles it.
   */
  readonly completingUntil: number | null;
  /**
   * The completion that set `complete_in_progress` (a random token): it holds the spend
   * reservation under the order id, so a release by a completion that was undone gives back
   * only what is still its own (ledger.ts, ReserveRequest.holder). Absent before it was kept.
   */
  readonly completionHolder?: string;
  /**
   * The idempotency record of the completion request that took the session (a digest of the
   * caller, the path, the key and the body; gateway/agent/acp/idempotency.ts): the same request
   * again, after a crash lost its stored reply, is answered with the completed session instead
   * of being refused as already completed. Absent when the protocol gave none.
   */
  readonly completedBy?: string;
  /**
   * The user's authorization the completion was verified against (an AP2 checkout mandate,
   * docs/ap2.md), kept as evidence with the order; absent when the protocol gave none.
   */
  readonly authorization?: OrderAuthorization;
  /**
   * ACP: the completion's `payment_data` as the platform gave it (validated to the bundle's
   * schema, at most 4 KiB; docs/acp.md), kept as evidence with the order; absent otherwise.
   */
  readonly paymentData?: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Epoch ms after which an open session is expired. */
  readonly expiresAt: number;
  /** Bumped by every change; a change is written only over the version it was computed from. */
  readonly version: number;
}

import type { OrderAuthorization } from './authorization.ts';

export type { OrderAuthorization };

export const newSessionId = (): string => `cs_${randomUUID().replace(/-/g, '')}`;
export const SESSION_ID = /^cs_[0-9a-f]{32}$/;

/**
 * The order id of a session's completion: the same session always places the same order, so a
 * completion retried after a lost reply, on any replica, finds the reservation and the order of
 * the first instead of buying twice (the ledger and the order domain are idempotent by order id).
 */
export const orderIdOfSession = (sessionId: string): string =>
  `ord_${createHash('sha256').update('checkout\0').update(sessionId).digest('hex').slice(0, 32)}`;

export const EMPTY_TOTALS: SessionTotals = {
  baseCents: 0,
  discountCents: 0,
  subtotalCents: 0,
  totalCents: 0,
};

/** The status a priced, open session has: not ready while a blocking problem stands. */
export const readiness = (p: Pick<SessionPricing, 'problems' | 'lines'>): SessionStatus =>
  !p.lines.some((l) => !l.unpriced) || p.problems.some((x) => x.blocking)
    ? 'not_ready_for_payment'
    : 'ready_for_payment';

/**
 * Whether anything in it can be bought as it stands: a line that is priced and not short of
 * stock. A create where nothing can is refused as a whole by the protocols that have a shape
 * for it (UCP's error_response).
 */
export function buyable(p: Pick<SessionPricing, 'problems' | 'lines'>): boolean {
  const short = new Set(p.problems.flatMap((x) => (x.kind === 'out_of_stock' ? [x.item] : [])));
  return p.lines.some((l) => !l.unpriced && !short.has(l.item));
}

/** What an agent may still change: open sessions only. */
export const isOpen = (s: Pick<CheckoutSession, 'status'>): boolean =>
  s.status === 'not_ready_for_payment' || s.status === 'ready_for_payment';

/** A completion placed the session's order: completed, or its order waits for approval. */
export const orderPlaced = (s: Pick<CheckoutSession, 'status'>): boolean =>
  s.status === 'completed' || s.status === 'pending_approval';

/** The promotions the session's discounts came from, each once (what a completion redeems). */
export const promotionIdsOf = (s: Pick<CheckoutSession, 'discounts'>): string[] => [
  ...new Set(s.discounts.map((x) => x.promotionId)),
];

/** An open session whose time is up is expired, whether or not anyone stored that yet. */
export function effectiveStatus(s: CheckoutSession, nowMs: number): SessionStatus {
  return isOpen(s) && nowMs >= s.expiresAt ? 'expired' : s.status;
}

export interface NewSession {
  readonly id: string;
  readonly protocol: 'acp' | 'ucp';
  readonly owner: string;
  readonly agentId: string;
  readonly keyId: string | null;
  readonly channel?: SessionChannel | null;
  readonly currency: string;
  readonly region: string;
  readonly items: readonly SessionItem[];
  readonly codes: readonly string[];
  readonly extensions: readonly string[];
  readonly buyer: Record<string, unknown> | null;
  readonly fulfillment: Record<string, unknown> | null;
  readonly ttlMs: number;
}

/** A new session with its first pricing. Pure: id and time are given. */
export function createSession(n: NewSession, pricing: SessionPricing, nowMs: number): CheckoutSession {
  return {
    id: n.id,
    protocol: n.protocol,
    owner: n.owner,
    agentId: n.agentId,
    keyId: n.keyId,
    ...(n.channel ? { channel: n.channel } : {}),
    status: readiness(pricing),
    currency: n.currency,
    region: n.region,
    items: n.items,
    codes: n.codes,
    extensions: n.extensions,
    buyer: n.buyer,
    fulfillment: n.fulfillment,
    lines: pricing.lines,
    discounts: pricing.discounts,
    rejected: pricing.rejected,
    problems: pricing.problems,
    totals: pricing.totals,
    quote: pricing.quote,
    orderId: null,
    purchaseOrderNumber: null,
    completingUntil: null,
    createdAt: nowMs,
    updatedAt: nowMs,
    expiresAt: nowMs + n.ttlMs,
    version: 0,
  };
}

/** What an update may change; absent fields stay as they are. */
export interface SessionChange {
  readonly items?: readonly SessionItem[];
  readonly codes?: readonly string[];
  readonly buyer?: Record<string, unknown> | null;
  readonly fulfillment?: Record<string, unknown> | null;
  readonly region?: string;
}

/** The session after an update, re-priced. Pure. */
export function updateSession(
  s: CheckoutSession,
  change: SessionChange,
  pricing: SessionPricing,
  nowMs: number,
): CheckoutSession {
  return {
    ...s,
    items: change.items ?? s.items,
    codes: change.codes ?? s.codes,
    buyer: change.buyer !== undefined ? change.buyer : s.buyer,
    fulfillment: change.fulfillment !== undefined ? change.fulfillment : s.fulfillment,
    region: change.region ?? s.region,
    lines: pricing.lines,
    discounts: pricing.discounts,
    rejected: pricing.rejected,
    problems: pricing.problems,
    totals: pricing.totals,
    quote: pricing.quote,
    status: readiness(pricing),
    updatedAt: nowMs,
    version: s.version + 1,
  };
}

/** The session moved to `status` (with extra fields), one version on. Pure. */
export function withStatus(
  s: CheckoutSession,
  status: SessionStatus,
  nowMs: number,
  extra: Partial<
    Pick<
      CheckoutSession,
      'orderId' | 'purchaseOrderNumber' | 'problems' | 'completingUntil' | 'completionHolder'
    >
  > = {},
): CheckoutSession {
  // Leaving complete_in_progress ends the completion's hold, unless `extra` sets a new one.
  return {
    ...s,
    completingUntil: status === 'complete_in_progress' ? (s.completingUntil ?? null) : null,
    ...extra,
    status,
    updatedAt: nowMs,
    version: s.version + 1,
  };
}

/** The session with one more problem (replacing an earlier one of the same kind). Pure. */
export function withProblem(s: CheckoutSession, p: SessionProblem): SessionProblem[] {
  return [...s.problems.filter((x) => x.kind !== p.kind), p];
}

/** Problems that the completion itself raised, dropped when the agent tries again. */
export const COMPLETION_PROBLEMS: ReadonlySet<SessionProblem['kind']> = new Set([
  'spend_refused',
  'price_changed',
  'order_failed',
]);

/**
 * Whether a completion may proceed from this status: a ready session, one whose only blocking
 * problems came from an earlier completion (a budget that may have reset), or a completion
 * that died half-way (resumed: its order id is fixed).
 */
export function completable(s: CheckoutSession): boolean {
  if (s.status === 'complete_in_progress' || s.status === 'ready_for_payment') return true;
  if (s.status !== 'not_ready_for_payment' || !s.lines.some((l) => !l.unpriced)) return false;
  return s.problems.every((p) => !p.blocking || COMPLETION_PROBLEMS.has(p.kind));
}

/** Whether a completion holds the session now (another one must wait: 409). */
export const completionHeld = (s: CheckoutSession, nowMs: number): boolean =>
  s.status === 'complete_in_progress' && s.completingUntil !== null && nowMs < s.completingUntil;
