import type { Refusal } from './ledger.ts';
import { type SpendPolicy, skuAllowed } from './policy.ts';

/**
 * Does an order of `amountCents` for `sku` fit `policy`, given what the period has spent?
 * The rules in the order they are checked; the Redis script (redis.ts) applies the same ones
 * and the shared contract test holds both to the same answers.
 */
export function judge(
  policy: SpendPolicy,
  spentCents: number,
  sku: string,
  amountCents: number,
  now: number,
): Refusal | null {
  if (policy.expiresAt !== undefined && policy.expiresAt <= now) return 'expired';
  if (!skuAllowed(policy, sku)) return 'sku-not-allowed';
  if (policy.maxPerOrderCents !== undefined && amountCents > policy.maxPerOrderCents) return 'per-order';
  if (spentCents + amountCents > policy.budgetCents) return 'budget';
  return null;
}
