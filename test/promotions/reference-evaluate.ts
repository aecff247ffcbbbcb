/**
 * The test oracle for the rule index and the lazy explanations: the evaluation as it was before
 * them (commit 4e91de9, subgraphs/promotions/domain/evaluate.ts), kept verbatim but for imports.
 * It visits every active rule in priority order and builds every explanation as it goes: a
 * plain full scan, eager and obviously complete. test/promotions/rule-index.test.ts checks that
 * the indexed, lazy evaluate() gives exactly what this gives, for random rules and baskets.
 */
import type { Basket } from '../../subgraphs/promotions/domain/basket.ts';
import { toAmount } from '../../subgraphs/promotions/domain/cents.ts';
import type { EvaluationContext } from '../../subgraphs/promotions/domain/evaluate.ts';
import type { CompiledRule } from '../../subgraphs/promotions/domain/rule.ts';
import type { Ruleset } from '../../subgraphs/promotions/domain/ruleset.ts';
import type {
  AppliedDiscount,
  CouponResult,
  DiscountAllocation,
  LineResult,
  NotAppliedPromotion,
  PromotionEvaluation,
} from '../../subgraphs/promotions/domain/shapes.ts';

/** What the evaluation of one basket carries from rule to rule. */
interface State {
  readonly basket: Basket;
  readonly ctx: EvaluationContext;
  /** Cents left of each line after the discounts so far. */
  readonly remaining: number[];
  /** What the current rule took from each line; zeroed again as it is read. */
  readonly taken: number[];
  /** What the current action takes from each line (one array reused by every action). */
  readonly cut: number[];
  readonly applied: AppliedDiscount[];
  /** The STOP_AFTER or EXCLUSIVE rule that applied, after which no rule applies. */
  stoppedBy: CompiledRule | undefined;
}

/**
 * Applies the active rules to the basket in priority order under their stacking policy. Pure:
 * the same ruleset, basket and context always give the same evaluation. Each line keeps what is
 * left of it after the discounts so far, and no action may take more, so no line goes below 0.
 */
export function evaluateFullScan(
  rules: Ruleset,
  basket: Basket,
  ctx: EvaluationContext,
): PromotionEvaluation {
  const state: State = {
    basket,
    ctx,
    remaining: basket.lines.map((l) => l.totalCents),
    taken: basket.lines.map(() => 0),
    cut: basket.lines.map(() => 0),
    applied: [],
    stoppedBy: undefined,
  };
  const notApplied: NotAppliedPromotion[] = [];
  for (const rule of rules.active) {
    const coupon =
      rule.couponCodes.length > 0 ? rule.couponCodes.find((c) => basket.couponSet.has(c)) : undefined;
    const refused = whyNot(rule, coupon, state);
    if (refused) {
      notApplied.push(refused);
      continue;
    }
    const discount = applyActions(rule, state);
    if (!discount) {
      const why = rule.actions.map((a) => a.miss?.(basket)).filter(Boolean);
      notApplied.push(
        entry(
          rule,
          'NO_ELIGIBLE_ITEMS',
          `conditions hold, but ${why.join('; ') || 'nothing is left to discount'}`,
        ),
      );
      continue;
    }
    if (coupon !== undefined) discount.couponCode = coupon;
    state.applied.push(discount);
    if (rule.stacking !== 'STACKABLE') state.stoppedBy = rule;
  }
  const totalCents = state.remaining.reduce((s, r) => s + r, 0);
  return {
    currency: basket.currency,
    subtotal: toAmount(basket.subtotalCents),
    applied: state.applied,
    notApplied,
    coupons: couponResults(rules, basket, state.applied, ctx.now),
    lines: lineResults(basket, state.remaining),
    discountTotal: toAmount(basket.subtotalCents - totalCents),
    total: toAmount(totalCents),
  };
}

const entry = (
  rule: CompiledRule,
  reason: NotAppliedPromotion['reason'],
  detail: string,
): NotAppliedPromotion => ({
  promotionId: rule.promotionId,
  name: rule.name,
  reason,
  detail,
});

/** The first reason a rule cannot apply, in the documented order; undefined when it may. */
function whyNot(rule: CompiledRule, coupon: string | undefined, s: State): NotAppliedPromotion | undefined {
  const { basket, ctx } = s;
  if (rule.validFrom !== undefined && ctx.now < rule.validFrom)
    return entry(rule, 'NOT_YET_VALID', `valid from ${rule.document.valid_from}`);
  if (rule.validUntil !== undefined && ctx.now >= rule.validUntil)
    return entry(rule, 'EXPIRED', `valid until ${rule.document.valid_until}`);
  if (rule.couponCodes.length > 0 && coupon === undefined)
    return entry(rule, 'COUPON_REQUIRED', 'needs one of its coupon codes');
  if (!rule.condition.test(basket)) {
    const why = rule.condition.explain(basket);
    // One literal per shape: adding `condition` afterwards, or a spread, is the slow path here.
    return why
      ? {
          promotionId: rule.promotionId,
          name: rule.name,
          reason: 'CONDITION_FAILED',
          detail: why.detail,
          condition: why.condition,
        }
      : entry(rule, 'CONDITION_FAILED', 'a condition failed');
  }
  const cap = rule.maxRedemptionsPerUser;
  if (
    cap !== undefined &&
    basket.customerId !== undefined &&
    (ctx.redeemed.get(rule.promotionId) ?? 0) >= cap
  )
    return entry(rule, 'REDEMPTION_LIMIT_REACHED', `customer has used it ${cap} time(s), the most allowed`);
  if (s.stoppedBy)
    return entry(
      rule,
      'STOPPED_BY_HIGHER_PRIORITY',
      `${s.stoppedBy.promotionId} (${s.stoppedBy.stacking}) stops later rules`,
    );
  if (rule.stacking === 'EXCLUSIVE' && s.applied.length > 0)
    return entry(
      rule,
      'EXCLUSIVE_CONFLICT',
      `exclusive, and ${s.applied.map((a) => a.promotionId).join(', ')} already applied`,
    );
  for (const a of rule.actions)
    if (a.currency !== undefined && a.currency !== basket.currency)
      return entry(
        rule,
        'CURRENCY_MISMATCH',
        `its amount is in ${a.currency}, the basket in ${basket.currency}`,
      );
  return undefined;
}

/**
 * Runs a rule's actions in order, each on what the previous ones left, and takes their cuts
 * from the lines. Undefined when they found nothing to discount (nothing was taken then).
 */
function applyActions(rule: CompiledRule, s: State): AppliedDiscount | undefined {
  const { basket, remaining, taken, cut } = s;
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
  if (total === 0) return undefined;
  return {
    promotionId: rule.promotionId,
    name: rule.name,
    priority: rule.priority,
    actions: producing,
    amount: toAmount(total),
    allocations,
  };
}

function lineResults(basket: Basket, remaining: readonly number[]): LineResult[] {
  return basket.lines.map((l) => {
    const left = remaining[l.index] ?? 0;
    return {
      lineIndex: l.index,
      sku: l.sku,
      lineTotal: toAmount(l.totalCents),
      discount: toAmount(l.totalCents - left),
      total: toAmount(left),
    };
  });
}

/** What became of each coupon entered: APPLIED, NOT_APPLIED (see notApplied), UNKNOWN, EXPIRED. */
function couponResults(
  rules: Ruleset,
  basket: Basket,
  applied: readonly AppliedDiscount[],
  now: number,
): CouponResult[] {
  if (basket.coupons.length === 0) return [];
  const appliedIds = new Set(applied.map((a) => a.promotionId));
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
