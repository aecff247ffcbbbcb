import type { CompiledRule } from './rule.ts';
import { buildIndex, type RuleIndex } from './rule-index.ts';

/** The compiled rules of one instance, ordered and indexed once per change, not per request. */
export interface Ruleset {
  /** ACTIVE rules by priority, high first; ties by promotion_id, so the order is total. */
  readonly active: readonly CompiledRule[];
  /** Every stored rule by id (inactive ones included). */
  readonly byId: ReadonlyMap<string, CompiledRule>;
  /** Normalised coupon code → the active rules it unlocks. */
  readonly coupons: ReadonlyMap<string, readonly CompiledRule[]>;
  /** Whether any active rule has a redemption cap (else no lookup is needed). */
  readonly capped: boolean;
  /** Which active rules a basket can possibly satisfy (rule-index.ts). */
  readonly index: RuleIndex;
}

export function buildRuleset(rules: Iterable<CompiledRule>): Ruleset {
  const byId = new Map<string, CompiledRule>();
  for (const r of rules) byId.set(r.promotionId, r);
  const active = [...byId.values()]
    .filter((r) => r.status === 'ACTIVE')
    .sort((a, b) => b.priority - a.priority || (a.promotionId < b.promotionId ? -1 : 1));
  const coupons = new Map<string, CompiledRule[]>();
  for (const r of active)
    for (const code of r.couponCodes) coupons.set(code, [...(coupons.get(code) ?? []), r]);
  return {
    active,
    byId,
    coupons,
    capped: active.some((r) => r.maxRedemptionsPerUser !== undefined),
    index: buildIndex(active),
  };
}

export const emptyRuleset: Ruleset = buildRuleset([]);
