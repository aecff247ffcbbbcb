import type { Basket } from './basket.ts';
import { toAmount } from './cents.ts';
import type { CompiledRule } from './rule.ts';
import { CANDIDATE, candidatesOf } from './rule-index.ts';
import type { Ruleset } from './ruleset.ts';
import type {
  AppliedDiscount,
  CouponResult,
  DiscountAllocation,
  LineResult,
  NotAppliedPromotion,
  PromotionEvaluation,
} from './shapes.ts';

export interface EvaluationContext {
  /** Milliseconds since the epoch, for validity windows. */
  readonly now: number;
  /** Redemptions the basket's customer has already consumed, by promotion id. */
  readonly redeemed: ReadonlyMap<string, number>;
}

/**
 * What became of each active rule, one small integer per rule in priority order (the array
 * candidatesOf returns: SKIPPED or CANDIDATE, then overwritten as rules are visited). The
 * evaluation records these codes only; the `notApplied` entries (objects, sentences) are built
 * from them when first read. The codes that name no reason (SKIPPED, REFUSED) are those whose
 * reason depends on the rule, the basket and `now` alone, so deriving it later gives the same
 * answer as deriving it then; a reason that depends on the evaluation's progress (what applied
 * before, the redemption counts) is recorded as it happens.
 */
const REFUSED = 2; // outside its validity window, coupon missing, or a condition failed
const APPLIED = 3;
const LIMIT_REACHED = 4;
const STOPPED = 5;
const EXCLUSIVE_CONFLICT = 6;
const CURRENCY_MISMATCH = 7;
const NO_ELIGIBLE_ITEMS = 8;

/**
 * Applies the active rules to the basket in priority order under their stacking policy. Pure:
 * the same ruleset, basket and context always give the same evaluation. Each line keeps what is
 * left of it after the discounts so far, and no action may take more, so no line goes below 0.
 *
 * Only the rules the index (rule-index.ts) finds possible for this basket are visited; the others
 * cannot apply, so they change nothing for the rest. `notApplied` is computed when first read
 * (a memoised getter: JSON.stringify, GraphQL field resolution and spreading all read it), with
 * the same entries, in the same order, as if every rule had been explained as it was visited.
 * The basket must not change afterwards (nothing in this module changes it).
 */
export function evaluate(rules: Ruleset, basket: Basket, ctx: EvaluationContext): PromotionEvaluation {
  const { active } = rules;
  const { lines, couponSet, customerId } = basket;
  const { now, redeemed } = ctx;
  const outcome = candidatesOf(rules.index, basket);
  const n = lines.length;
  const remaining = new Array<number>(n);
  const taken = new Array<number>(n);
  const cut = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    remaining[i] = (lines[i] as Basket['lines'][number]).totalCents;
    taken[i] = 0;
    cut[i] = 0;
  }
  const applied: AppliedDiscount[] = [];
  /** The STOP_AFTER or EXCLUSIVE rule that applied, after which no rule applies (set once). */
  let stoppedBy: CompiledRule | undefined;

  for (let p = 0; p < active.length; p++) {
    if (outcome[p] !== CANDIDATE) continue;
    const rule = active[p] as CompiledRule;
    const coupon = couponOf(rule, couponSet);
    if (!mayApply(rule, coupon, basket, now)) outcome[p] = REFUSED;
    else if (capReached(rule, customerId, redeemed)) outcome[p] = LIMIT_REACHED;
    else if (stoppedBy) outcome[p] = STOPPED;
    else if (rule.stacking === 'EXCLUSIVE' && applied.length > 0) outcome[p] = EXCLUSIVE_CONFLICT;
    else if (mismatchOf(rule, basket)) outcome[p] = CURRENCY_MISMATCH;
    else {
      const discount = applyActions(rule, basket, remaining, taken, cut);
      if (!discount) outcome[p] = NO_ELIGIBLE_ITEMS;
      else {
        if (coupon !== undefined) discount.couponCode = coupon;
        applied.push(discount);
        outcome[p] = APPLIED;
        if (rule.stacking !== 'STACKABLE') stoppedBy = rule;
      }
    }
  }

  let totalCents = 0;
  for (let i = 0; i < n; i++) totalCents += remaining[i] as number;
  const result = { currency: basket.currency, subtotal: toAmount(basket.subtotalCents), applied };
  const pending: Pending = { active, outcome, basket, now, stoppedBy, list: undefined };
  Object.defineProperty(result, PENDING, { value: pending });
  Object.defineProperty(result, 'notApplied', NOT_APPLIED);
  const evaluation = result as PromotionEvaluation;
  evaluation.coupons = couponResults(rules, basket, applied, now);
  evaluation.lines = lineResults(basket, remaining);
  evaluation.discountTotal = toAmount(basket.subtotalCents - totalCents);
  evaluation.total = toAmount(totalCents);
  return evaluation;
}

/** What `notApplied` is built from when first read, and the list once built. */
interface Pending {
  readonly active: readonly CompiledRule[];
  readonly outcome: readonly number[];
  readonly basket: Basket;
  readonly now: number;
  readonly stoppedBy: CompiledRule | undefined;
  list: NotAppliedPromotion[] | undefined;
}

const PENDING = Symbol('notApplied, pending');
type WithPending = { [PENDING]: Pending };

/**
 * `notApplied` is an own, enumerable accessor (so JSON.stringify, spreading, structuredClone and
 * deep equality see it like a field) whose getter and setter are the same two functions for
 * every evaluation, reading the pending state from a non-enumerable symbol. An object literal
 * with `get notApplied()` would be simpler, but it makes new accessor functions per call, so V8
 * gives each evaluation its own hidden class and its scavenges then keep and promote every
 * evaluation's garbage (measured: pauses of about 6 ms instead of 0.2 ms).
 */
const NOT_APPLIED: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: WithPending): NotAppliedPromotion[] {
    const p = this[PENDING];
    p.list ??= explain(p.active, p.outcome, p.basket, p.now, p.stoppedBy);
    return p.list;
  },
  set(this: WithPending, list: NotAppliedPromotion[]) {
    this[PENDING].list = list;
  },
};

/** The entered coupon that unlocks the rule, if it needs one. */
function couponOf(rule: CompiledRule, entered: ReadonlySet<string>): string | undefined {
  const codes = rule.couponCodes;
  for (let i = 0; i < codes.length; i++) if (entered.has(codes[i] as string)) return codes[i];
  return undefined;
}

/** Inside its validity window, unlocked when it needs a coupon, and its conditions hold. */
const mayApply = (rule: CompiledRule, coupon: string | undefined, basket: Basket, now: number): boolean =>
  (rule.validFrom === undefined || now >= rule.validFrom) &&
  (rule.validUntil === undefined || now < rule.validUntil) &&
  (rule.couponCodes.length === 0 || coupon !== undefined) &&
  rule.condition.test(basket);

const capReached = (
  rule: CompiledRule,
  customerId: string | undefined,
  redeemed: ReadonlyMap<string, number>,
): boolean =>
  rule.maxRedemptionsPerUser !== undefined &&
  customerId !== undefined &&
  (redeemed.get(rule.promotionId) ?? 0) >= rule.maxRedemptionsPerUser;

/** The first action whose fixed amount is in another currency than the basket's. */
function mismatchOf(rule: CompiledRule, basket: Basket): { currency?: string } | undefined {
  for (const a of rule.actions) if (a.currency !== undefined && a.currency !== basket.currency) return a;
  return undefined;
}

/**
 * Runs a rule's actions in order, each on what the previous ones left, and takes their cuts
 * from the lines. Undefined when they found nothing to discount (nothing was taken then).
 * `cut` is all zeros on entry and on return; `taken` likewise.
 */
function applyActions(
  rule: CompiledRule,
  basket: Basket,
  remaining: number[],
  taken: number[],
  cut: number[],
): AppliedDiscount | undefined {
  let producing: string[] | undefined;
  for (const action of rule.actions) {
    if (!action.apply(basket, remaining, cut)) continue;
    let any = false;
    for (let i = 0; i < cut.length; i++) {
      const c = cut[i] as number;
      if (c === 0) continue;
      cut[i] = 0;
      if (c < 0) continue;
      remaining[i] = (remaining[i] as number) - c;
      taken[i] = (taken[i] as number) + c;
      any = true;
    }
    if (!any) continue;
    if (producing) producing.push(action.type);
    else producing = [action.type];
  }
  if (!producing) return undefined;
  // Sized first: growing the array push by push was a fifth of all the bytes an evaluation
  // allocated (a cart-wide rule has one allocation per line).
  let count = 0;
  for (let i = 0; i < taken.length; i++) if (taken[i] !== 0) count++;
  const allocations = new Array<DiscountAllocation>(count);
  let total = 0;
  for (let i = 0, k = 0; i < taken.length; i++) {
    const c = taken[i] as number;
    if (c === 0) continue;
    taken[i] = 0;
    total += c;
    allocations[k++] = {
      lineIndex: i,
      sku: (basket.lines[i] as Basket['lines'][number]).sku,
      amount: toAmount(c),
    };
  }
  return {
    promotionId: rule.promotionId,
    name: rule.name,
    priority: rule.priority,
    actions: producing,
    amount: toAmount(total),
    allocations,
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

/**
 * The notApplied list from the recorded outcomes, in priority order: every active rule that did
 * not apply, with the first reason that holds, in the documented order (docs/promotions.md).
 */
function explain(
  active: readonly CompiledRule[],
  outcome: readonly number[],
  basket: Basket,
  now: number,
  stoppedBy: CompiledRule | undefined,
): NotAppliedPromotion[] {
  const out: NotAppliedPromotion[] = [];
  /** Rules applied so far, in priority order (an EXCLUSIVE_CONFLICT names those before it). */
  const before: string[] = [];
  for (let p = 0; p < active.length; p++) {
    const rule = active[p] as CompiledRule;
    switch (outcome[p]) {
      case APPLIED:
        before.push(rule.promotionId);
        break;
      case LIMIT_REACHED:
        out.push(
          entry(
            rule,
            'REDEMPTION_LIMIT_REACHED',
            `customer has used it ${rule.maxRedemptionsPerUser} time(s), the most allowed`,
          ),
        );
        break;
      case STOPPED:
        out.push(
          entry(
            rule,
            'STOPPED_BY_HIGHER_PRIORITY',
            `${stoppedBy?.promotionId} (${stoppedBy?.stacking}) stops later rules`,
          ),
        );
        break;
      case EXCLUSIVE_CONFLICT:
        out.push(entry(rule, 'EXCLUSIVE_CONFLICT', `exclusive, and ${before.join(', ')} already applied`));
        break;
      case CURRENCY_MISMATCH:
        out.push(
          entry(
            rule,
            'CURRENCY_MISMATCH',
            `its amount is in ${mismatchOf(rule, basket)?.currency}, the basket in ${basket.currency}`,
          ),
        );
        break;
      case NO_ELIGIBLE_ITEMS: {
        const why = rule.actions.map((a) => a.miss?.(basket)).filter(Boolean);
        out.push(
          entry(
            rule,
            'NO_ELIGIBLE_ITEMS',
            `conditions hold, but ${why.join('; ') || 'nothing is left to discount'}`,
          ),
        );
        break;
      }
      default: // SKIPPED (by the index) or REFUSED; no CANDIDATE remains after the loop
        out.push(refusal(rule, basket, now));
    }
  }
  return out;
}

/**
 * Why a rule that was refused, or that the index skipped, does not apply: the first of validity,
 * coupon and conditions that fails. The index skips only rules lacking a necessary coupon or
 * condition, so one of them always fails (test/promotions/rule-index.test.ts checks it).
 */
function refusal(rule: CompiledRule, basket: Basket, now: number): NotAppliedPromotion {
  if (rule.validFrom !== undefined && now < rule.validFrom)
    return entry(rule, 'NOT_YET_VALID', `valid from ${rule.document.valid_from}`);
  if (rule.validUntil !== undefined && now >= rule.validUntil)
    return entry(rule, 'EXPIRED', `valid until ${rule.document.valid_until}`);
  if (rule.couponCodes.length > 0 && couponOf(rule, basket.couponSet) === undefined)
    return entry(rule, 'COUPON_REQUIRED', 'needs one of its coupon codes');
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

function lineResults(basket: Basket, remaining: readonly number[]): LineResult[] {
  const out = new Array<LineResult>(basket.lines.length);
  for (let i = 0; i < out.length; i++) {
    const l = basket.lines[i] as Basket['lines'][number];
    const left = remaining[i] as number;
    out[i] = {
      lineIndex: l.index,
      sku: l.sku,
      lineTotal: toAmount(l.totalCents),
      discount: toAmount(l.totalCents - left),
      total: toAmount(left),
    };
  }
  return out;
}

/** What became of each coupon entered: APPLIED, NOT_APPLIED (see notApplied), UNKNOWN, EXPIRED. */
function couponResults(
  rules: Ruleset,
  basket: Basket,
  applied: readonly AppliedDiscount[],
  now: number,
): CouponResult[] {
  if (basket.coupons.length === 0) return [];
  // Only a rule with coupon codes can be unlocked by one, and such a rule applies with its coupon.
  const appliedIds = new Set<string>();
  for (const a of applied) if (a.couponCode !== undefined) appliedIds.add(a.promotionId);
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
