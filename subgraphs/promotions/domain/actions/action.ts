import { money } from '../../../../lib/money.ts';
import type { Basket, Line } from '../basket.ts';
import { PERCENT_SCALE } from '../cents.ts';
import type { Check } from '../check.ts';

/**
 * A compiled action computes, for each line, the cents it takes off. It never takes more than
 * what is left of a line (`remaining`), which is how no line goes below zero however many
 * rules stack. It reads the basket and writes into `out` (all zeros on entry, one slot per
 * line): the caller reuses one array, so a thousand rules allocate nothing per action.
 */
export interface CompiledAction {
  readonly type: string;
  /** Fixed amounts are in one currency; a basket in another gets CURRENCY_MISMATCH. */
  readonly currency?: string;
  /**
   * Writes the cents to take from each line into `out`; returns whether any share is above
   * zero. When it returns false `out` is all zeros still, so the caller skips reading it.
   */
  apply(b: Basket, remaining: readonly number[], out: number[]): boolean;
  /** Why the action found nothing to discount, for the explanation (NO_ELIGIBLE_ITEMS). */
  miss?(b: Basket): string;
}

export interface ActionType {
  compile(o: Record<string, unknown>, at: string, check: Check): CompiledAction | undefined;
}

/** A percentage 0 < v ≤ 100 with at most 4 decimals, as millionths of the whole. */
export function percentPart(v: unknown, at: string, check: Check): number | undefined {
  const n = check.number(v, at);
  if (n === undefined) return undefined;
  if (n <= 0 || n > 100) return check.fail(at, 'must be a percentage above 0 and at most 100');
  const part = money(n).times(PERCENT_SCALE / 100);
  if (!part.isInteger()) return check.fail(at, 'must have at most 4 decimals');
  return part.toNumber();
}

export const CATEGORY = { max: 64 } as const;

/** Which lines an action may discount: those of `category`, or every line when it is undefined. */
export interface Target {
  readonly category: string | undefined;
  readonly eligible: (l: Line) => boolean;
}

export function targetOf(o: Record<string, unknown>, at: string, check: Check, required: boolean): Target {
  if (o.target_category === undefined) {
    if (required) check.fail(`${at}/target_category`, 'is required');
    return { category: undefined, eligible: () => true };
  }
  const category = check.string(o.target_category, `${at}/target_category`, CATEGORY);
  return { category, eligible: (l: Line) => l.category === category };
}

/**
 * Whether the basket has a line the target covers: one Set look-up, so an action on a category
 * the basket lacks returns before walking the lines (most of a large rule set's actions).
 */
export const inBasket = (b: Basket, t: Target): boolean =>
  t.category === undefined ? b.lines.length > 0 : b.categories.has(t.category);

/** Units of the basket an action may discount. */
export const unitsOf = (b: Basket, eligible: (l: Line) => boolean): number =>
  b.lines.reduce((n, l) => n + (eligible(l) ? l.quantity : 0), 0);

/** How a target reads in an explanation. */
export const targetText = (o: Record<string, unknown>): string =>
  typeof o.target_category === 'string' ? `of category ${o.target_category}` : 'in the cart';

/**
 * What is left of the eligible lines (0 for the others) in the basket's scratch array, and
 * its sum, in one pass. The array is valid until the next call.
 */
export function eligibleWeights(
  b: Basket,
  remaining: readonly number[],
  eligible: (l: Line) => boolean,
): number {
  const weights = b.scratch;
  let base = 0;
  for (const l of b.lines) {
    const w = eligible(l) ? (remaining[l.index] ?? 0) : 0;
    weights[l.index] = w;
    base += w;
  }
  return base;
}
