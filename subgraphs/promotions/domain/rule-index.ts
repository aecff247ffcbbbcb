import type { Basket } from './basket.ts';
import type { Dimension } from './needs.ts';
import type { CompiledRule } from './rule.ts';

/**
 * The rule index: for each basket key (a category, sku, coupon, currency, customer or segment
 * value), the positions in priority order of the active rules that need it (CompiledRule.needs).
 * A basket visits only the rules one of its keys points at, plus the rules no key indexes. A
 * rule left out lacks every key of a clause its coupon codes or conditions make necessary, so it
 * cannot apply and changes nothing for the others; its "why not" is derived only when asked
 * (evaluate.ts). Built once per rule change, read-only afterwards.
 */
/** Codes of candidatesOf's array (evaluate.ts overwrites them with what became of each rule). */
export const SKIPPED = 0; // not visited: the basket lacks every key of a clause the rule needs
export const CANDIDATE = 1;

export interface RuleIndex {
  /**
   * One small integer per active rule: CANDIDATE where no key indexes the rule (visited for
   * every basket), else SKIPPED. A plain array on purpose: copying it per evaluation is a memcpy of small
   * integers, while a typed array per call made V8's scavenges keep and promote garbage (measured
   * on Node 20: pauses of 10–40 ms against 0.1 ms; see docs/promotions.md, Performance).
   */
  readonly unindexed: readonly number[];
  readonly byKey: Readonly<Record<Dimension, ReadonlyMap<string, readonly number[]>>>;
}

export function buildIndex(active: readonly CompiledRule[]): RuleIndex {
  const unindexed = new Array<number>(active.length).fill(SKIPPED);
  const byKey: Record<Dimension, Map<string, number[]>> = {
    category: new Map(),
    sku: new Map(),
    coupon: new Map(),
    'cart.currency': new Map(),
    'customer.id': new Map(),
    'customer.segment': new Map(),
  };
  active.forEach((rule, position) => {
    if (!rule.needs) {
      unindexed[position] = CANDIDATE;
      return;
    }
    for (const { dim, value } of rule.needs) {
      const list = byKey[dim].get(value);
      if (!list) byKey[dim].set(value, [position]);
      else if (list[list.length - 1] !== position) list.push(position);
    }
  });
  return { unindexed, byKey };
}

/**
 * The rules to visit for this basket: a fresh array with CANDIDATE at their positions in
 * `active`, SKIPPED elsewhere (the caller may write its own codes into it). Cost: one copy of a small integer per rule, then one
 * map look-up per basket key or per indexed key of a dimension, whichever is fewer.
 */
export function candidatesOf(index: RuleIndex, b: Basket): number[] {
  const visit = index.unindexed.slice();
  const { byKey } = index;
  markEach(byKey.category, b.categories, visit);
  markEach(byKey.sku, b.skus, visit);
  markEach(byKey.coupon, b.couponSet, visit);
  mark(byKey['cart.currency'].get(b.currency), visit);
  if (b.customerId !== undefined) mark(byKey['customer.id'].get(b.customerId), visit);
  if (b.segment !== undefined) mark(byKey['customer.segment'].get(b.segment), visit);
  return visit;
}

function markEach(
  postings: ReadonlyMap<string, readonly number[]>,
  present: ReadonlySet<string>,
  visit: number[],
): void {
  if (postings.size === 0 || present.size === 0) return;
  if (postings.size <= present.size) {
    for (const [key, positions] of postings) if (present.has(key)) mark(positions, visit);
  } else for (const key of present) mark(postings.get(key), visit);
}

function mark(positions: readonly number[] | undefined, visit: number[]): void {
  if (!positions) return;
  for (let i = 0; i < positions.length; i++) visit[positions[i] as number] = CANDIDATE;
}
