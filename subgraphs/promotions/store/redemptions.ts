import type { RedemptionResult, ReleaseResult } from '../domain/shapes.ts';

/** One promotion an order used, with the cap in force when it is redeemed. */
export interface RedemptionItem {
  promotionId: string;
  /** max_redemptions_per_user; undefined means unlimited (still counted). */
  cap: number | undefined;
}

/**
 * Where redemptions are recorded and limits consumed. Both adapters (SQL, Redis) are atomic
 * across replicas and all or nothing per order: when one cap is reached nothing is consumed.
 * Idempotent per (customerId, orderId): a repeat consumes nothing and returns the first record.
 * One contract suite (test/promotions/redemption-store.contract.ts) runs against both.
 */
export interface RedemptionStore {
  readonly kind: 'sql' | 'redis';
  /** Redemptions the customer has consumed, by promotion id. */
  countsFor(customerId: string): Promise<Map<string, number>>;
  redeem(orderId: string, customerId: string, items: readonly RedemptionItem[]): Promise<RedemptionResult>;
  /** Deletes the order's record and gives its redemptions back, atomically. */
  release(orderId: string, customerId: string): Promise<ReleaseResult>;
}
