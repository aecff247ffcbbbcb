import type {
  AppliedDiscount,
  CouponResult,
  DiscountAllocation,
  NotAppliedPromotion,
  PromotionEvaluation,
} from '../api.ts';
import type { Basket } from './basket.ts';
import { toAmount } from './cents.ts';
import type { CompiledRule } from './rule.ts';
import type { Ruleset } from './ruleset.ts';

export interface EvaluationContext {
  /** Milliseconds since the epoch, for validity windows. */
  readonly now: number;
  /** Redemptions the basket's customer has already consumed, by promotion id. */
  readonly redeemed: ReadonlyMap<string, number>;
}

/**
 * Applies the active rules to the basket in priority order under their stacking policy. Pure:
 * the same ruleset, basket and context always give the same evaluation. Each line keeps what is
 * left of it after the discounts so far, and no action may take more, so no line goes below 0.
 */
export function evaluate(rules: Ruleset, basket: Basket, ctx: EvaluationContext): PromotionEvaluation {
  const remaining = basket.lines.map((l) => l.totalCents);
  /** What the current rule took from each line; zeroed again as it is read. */
  const taken: number[] = basket.lines.map(() => 0);
  /** What the current action takes from each line (reused by every action). */
  const cut: number[] = basket.lines.map(() => 0);
  const applied: AppliedDiscount[] = [];
  const notApplied: NotAppliedPromotion[] = [];
  const appliedIds = new Set<string>();
  let stoppedBy: CompiledRule | undefined;

  const skip = (r: CompiledRule, reason: NotAppliedPromotion['reason'], detail: string) =>
    notApplied.push({ promotionId: r.promotionId, name: r.name, reason, detail });

  for (const rule of rules.active) {
    if (rule.validFrom !== undefined && ctx.now < rule.validFrom) {
      skip(rule, 'NOT_YET_VALID', `valid from ${rule.document.valid_from}`);
      continue;
    }
    if (rule.validUntil !== undefined && ctx.now >= rule.validUntil) {
      skip(rule, 'EXPIRED', `valid until ${rule.document.valid_until}`);
      continue;
    }
    let coupon: string | undefined;
    if (rule.couponCodes.length > 0) {
      coupon = rule.couponCodes.find((c) => basket.couponSet.has(c));
      if (coupon === undefined) {
        skip(rule, 'COUPON_REQUIRED', 'needs one of its coupon codes');
        continue;
      }
    }
    if (!rule.condition.test(basket)) {
      const why = rule.condition.explain(basket);
      // Built field by field: an object spread here is the slow path, and this runs per failed rule.
      notApplied.push(
        why
          ? {
              promotionId: rule.promotionId,
              name: rule.name,
              reason: 'CONDITION_FAILED',
              detail: why.detail,
              condition: why.condition,
            }
          : {
              promotionId: rule.promotionId,
              name: rule.name,
              reason: 'CONDITION_FAILED',
              detail: 'a condition failed',
            },
      );
      continue;
    }
    const cap = rule.maxRedemptionsPerUser;
    if (
      cap !== undefined &&
      basket.customerId !== undefined &&
      (ctx.redeemed.get(rule.promotionId) ?? 0) >= cap
    ) {
      skip(rule, 'REDEMPTION_LIMIT_REACHED', `customer has used it ${cap} time(s), the most allowed`);
      continue;
    }
    if (stoppedBy) {
      skip(
        rule,
        'STOPPED_BY_HIGHER_PRIORITY',
        `${stoppedBy.promotionId} (${stoppedBy.stacking}) stops later rules`,
      );
      continue;
    }
    if (rule.stacking === 'EXCLUSIVE' && applied.length > 0) {
      skip(
        rule,
        'EXCLUSIVE_CONFLICT',
        `exclusive, and ${applied.map((a) => a.promotionId).join(', ')} already applied`,
      );
      continue;
    }
    let foreign: CompiledRule['actions'][number] | undefined;
    for (const a of rule.actions) if (a.currency !== undefined && a.currency !== basket.currency) foreign = a;
    if (foreign) {
      skip(
        rule,
        'CURRENCY_MISMATCH',
        `its amount is in ${foreign.currency}, the basket in ${basket.currency}`,
      );
      continue;
    }

    // Actions of a rule apply in order, each to what the previous ones left.
    const producing: string[] = [];
    for (const action of rule.actions) {
      cut.fill(0);
      action.apply(basket, remaining, cut);
      let any = false;
      for (let i = 0; i < cut.length; i++) {
        const c = cut[i] ?? 0;
        if (c <= 0) continue;
        remaining[i] = (remaining[i] ?? 0) - c;
        taken[i] = (taken[i] ?? 0) + c;
        any = true;
      }
      if (any) producing.push(action.type);
    }
    const allocations: DiscountAllocation[] = [];
    let total = 0;
    for (let i = 0; i < taken.length; i++) {
      const c = taken[i] ?? 0;
      if (c === 0) continue;
      taken[i] = 0;
      total += c;
      allocations.push({ lineIndex: i, sku: basket.lines[i]?.sku ?? '', amount: toAmount(c) });
    }
    if (total === 0) {
      const why = rule.actions.map((a) => a.miss?.(basket)).filter(Boolean);
      skip(
        rule,
        'NO_ELIGIBLE_ITEMS',
        `conditions hold, but ${why.join('; ') || 'nothing is left to discount'}`,
      );
      continue;
    }
    const discount: AppliedDiscount = {
      promotionId: rule.promotionId,
      name: rule.name,
      priority: rule.priority,
      actions: producing,
      amount: toAmount(total),
      allocations,
    };
    if (coupon !== undefined) discount.couponCode = coupon;
    applied.push(discount);
    appliedIds.add(rule.promotionId);
    if (rule.stacking !== 'STACKABLE') stoppedBy = rule;
  }

  const lines = basket.lines.map((l) => {
    const left = remaining[l.index] ?? 0;
    return {
      lineIndex: l.index,
      sku: l.sku,
      lineTotal: toAmount(l.totalCents),
      discount: toAmount(l.totalCents - left),
      total: toAmount(left),
    };
  });
  const totalCents = remaining.reduce((s, r) => s + r, 0);
  return {
    currency: basket.currency,
    subtotal: toAmount(basket.subtotalCents),
    applied,
    notApplied,
    coupons: couponResults(rules, basket, appliedIds, ctx.now),
    lines,
    discountTotal: toAmount(basket.subtotalCents - totalCents),
    total: toAmount(totalCents),
  };
}

/** What became of each coupon entered: APPLIED, NOT_APPLIED (see notApplied), UNKNOWN, EXPIRED. */
function couponResults(
  rules: Ruleset,
  basket: Basket,
  appliedIds: ReadonlySet<string>,
  now: number,
): CouponResult[] {
  return basket.coupons.map((code) => {
    const unlocks = rules.coupons.get(code) ?? [];
    if (unlocks.length === 0) return { code, status: 'UNKNOWN' };
    const used = unlocks.find((r) => appliedIds.has(r.promotionId));
    if (used) return { code, status: 'APPLIED', promotionId: used.promotionId };
    const live = unlocks.find((r) => r.validUntil === undefined || now < r.validUntil);
    if (!live) return { code, status: 'EXPIRED', promotionId: unlocks[0]?.promotionId ?? '' };
    return { code, status: 'NOT_APPLIED', promotionId: live.promotionId };
  });
}
