/**
 * The data shapes of the promotions API: the priced basket going in, the evaluation and the
 * redemption records coming out. They live in the domain so that the pure core depends on nothing
 * above it; `../api.ts` re-exports them as the module's stable API (add optional fields only).
 * The REST contract of the same shapes is schemas/openapi/promotions.yaml.
 *
 * Money: inputs are decimal amounts with at most 2 decimals, given as a JSON number (19.99) or a
 * numeric string ("19.99"); outputs are JSON numbers with at most 2 decimals, computed exactly in
 * integer cents (never binary floating point).
 */

/** A decimal amount with at most 2 decimals: `19.99` or `"19.99"`. */
export type MoneyInput = number | string;

/** One line of a basket the pricing service has already priced. */
export interface PricedLine {
  sku: string;
  category: string;
  /** Integer, 1 … 10,000. */
  quantity: number;
  /** Price of one unit after pricing modifiers, before promotions. */
  unitPrice: MoneyInput;
  /** unitPrice × quantity as priced; when given it is the line's amount (defaults to that product). */
  lineTotal?: MoneyInput;
}

export interface PricedBasket {
  /** ISO 4217 code, upper case: `USD`. */
  currency: string;
  customer?: { id?: string; segment?: string };
  /** Coupon codes the shopper entered; matched case-insensitively. */
  coupons?: string[];
  lines: PricedLine[];
}

/** The part of a discount taken from one line. */
export interface DiscountAllocation {
  /** Index of the line in the request (skus may repeat). */
  lineIndex: number;
  sku: string;
  amount: number;
}

export interface AppliedDiscount {
  promotionId: string;
  name: string;
  priority: number;
  /** Action types of the rule that produced an amount, in rule order. */
  actions: string[];
  /** The coupon that unlocked the rule, when it needs one. */
  couponCode?: string;
  amount: number;
  /** Per-line allocation; the amounts add up exactly to `amount`. */
  allocations: DiscountAllocation[];
}

/** Why an active rule gave no discount. */
export type NotAppliedReason =
  | 'CONDITION_FAILED'
  | 'COUPON_REQUIRED'
  | 'NOT_YET_VALID'
  | 'EXPIRED'
  | 'REDEMPTION_LIMIT_REACHED'
  | 'CURRENCY_MISMATCH'
  | 'NO_ELIGIBLE_ITEMS'
  | 'EXCLUSIVE_CONFLICT'
  | 'STOPPED_BY_HIGHER_PRIORITY';

/** The first condition that failed, for CONDITION_FAILED. */
export interface FailedCondition {
  /** JSON pointer into the rule document: `/conditions/all/1`. */
  pointer: string;
  fact?: string;
  operator?: string;
  /** The rule's operand. */
  expected?: unknown;
  /** The basket's value of the fact. */
  actual?: unknown;
}

export interface NotAppliedPromotion {
  promotionId: string;
  name: string;
  reason: NotAppliedReason;
  /** One sentence for people: `cart.total_quantity is 2, needs greater_than_inclusive 3`. */
  detail: string;
  condition?: FailedCondition;
}

export type CouponStatus = 'APPLIED' | 'NOT_APPLIED' | 'UNKNOWN' | 'EXPIRED';

export interface CouponResult {
  /** As normalised (trimmed, upper case). */
  code: string;
  status: CouponStatus;
  promotionId?: string;
}

export interface LineResult {
  lineIndex: number;
  sku: string;
  lineTotal: number;
  discount: number;
  /** lineTotal − discount, never below zero. */
  total: number;
}

export interface PromotionEvaluation {
  currency: string;
  subtotal: number;
  /** Rules applied, in the order they were applied (priority, high first). */
  applied: AppliedDiscount[];
  /** Every active rule that gave nothing, with the reason. */
  notApplied: NotAppliedPromotion[];
  coupons: CouponResult[];
  lines: LineResult[];
  discountTotal: number;
  /** subtotal − discountTotal. */
  total: number;
}

/** An order used these promotions: consume one redemption of each (idempotent by orderId). */
export interface RedemptionRequest {
  orderId: string;
  customerId: string;
  promotionIds: string[];
}

export type RedemptionStatus = 'REDEEMED' | 'ALREADY_RECORDED' | 'LIMIT_REACHED';

export interface RedemptionResult {
  orderId: string;
  customerId: string;
  status: RedemptionStatus;
  /** The promotions recorded for the order (for ALREADY_RECORDED: those of the first call). */
  promotionIds: string[];
  /** For LIMIT_REACHED: the promotions whose cap was reached; nothing was consumed. */
  limitReached: string[];
}

/** An order was cancelled: give back what it consumed (idempotent; a repeat finds nothing). */
export interface ReleaseRequest {
  orderId: string;
  customerId: string;
}

export interface ReleaseResult {
  orderId: string;
  customerId: string;
  /** RELEASED: the order's redemptions were given back; NOT_FOUND: nothing was recorded for it. */
  status: 'RELEASED' | 'NOT_FOUND';
  promotionIds: string[];
}
