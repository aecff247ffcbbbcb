import type { PeriodWindow, SpendPolicy } from './policy.ts';

/**
 * Where spend policies and what was spent under them live: in process (embedded) or in Redis
 * (distributed: every gateway replica and the procurement process see the same policies and
 * the same ledger at once). Both adapters run test/procurement/spend-ledger.contract.ts.
 */
export interface SpendLedger {
  putPolicy(policy: SpendPolicy): Promise<void>;
  /** True when a policy was removed; what it spent is forgotten with it (replacing a policy keeps it). */
  deletePolicy(subject: string): Promise<boolean>;
  getPolicy(subject: string): Promise<SpendPolicy | null>;
  listPolicies(): Promise<SpendPolicy[]>;
  /** The most specific policy among `candidates` (most specific first) and its spend this period. */
  status(candidates: readonly string[], now: number): Promise<SpendStatus | null>;
  /**
   * Checks an order against the policy that applies and, when it fits, adds its amount to the
   * period's spend under `orderId`, atomically across replicas. The same order id again, for the
   * same SKU and amount, is `replayed` and charges nothing; for another SKU or amount it is
   * `mismatch` and charges nothing either (see ReserveResult).
   */
  reserve(r: ReserveRequest): Promise<ReserveResult>;
  /**
   * Gives an order's reserved amount back to its period (no-op when unknown or released). With
   * `holder`, only while the reservation is still that holder's (see ReserveRequest.holder).
   * Returns the cents given back.
   */
  release(orderId: string, now: number, holder?: string): Promise<number>;
}

export interface SpendStatus {
  readonly policy: SpendPolicy;
  readonly window: PeriodWindow;
  readonly spentCents: number;
}

export interface ReserveRequest {
  readonly orderId: string;
  /** Policy subjects that may apply, most specific first (policy.candidateSubjects). */
  readonly candidates: readonly string[];
  readonly sku: string;
  readonly amountCents: number;
  readonly now: number;
  /**
   * Who holds the reservation: a checkout completion's token. A replay hands the reservation to
   * the new holder, so the release of a completion that was undone, arriving after another
   * completion of the same session replayed the reservation, finds it no longer its own and
   * gives nothing back (the order id is the session's, reused on purpose). Without it, as for
   * `/v2` orders, a release is unconditional.
   */
  readonly holder?: string;
}

export type Refusal = 'expired' | 'sku-not-allowed' | 'per-order' | 'budget';

export type ReserveResult =
  /** No policy applies to this identity. */
  | { readonly kind: 'no-policy' }
  /** This order id was reserved before, for the same SKU and amount: nothing charged again. */
  | { readonly kind: 'replayed' }
  /**
   * This order id was reserved before for another SKU or amount: nothing charged, and the order
   * must not go ahead under this id. A reservation is the charge of one request; a later one
   * under the same id (an Idempotency-Key reused with another body after the first attempt's
   * reply was lost) was never judged by the policy, so letting it through as a replay would
   * place an order the policy may refuse (a found hole: a 503 on a timed-out reserve released
   * the key, and the second body went through unchecked).
   */
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'reserved'; readonly status: SpendStatus }
  | { readonly kind: 'refused'; readonly reason: Refusal; readonly status: SpendStatus };

/** A reservation outlives its period by this, so a late retry of the order still finds it. */
export const RESERVATION_RETENTION_MS = 2 * 86_400_000;
/** The most policies a ledger holds (an operator's list is read whole). */
export const MAX_POLICIES = 10_000;

export class TooManyPolicies extends Error {
  override name = 'TooManyPolicies';
}
