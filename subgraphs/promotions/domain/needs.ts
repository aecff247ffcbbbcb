/**
 * What a condition needs from the basket, derived once at compile time so the rule index
 * (ruleset.ts) can skip the rules a basket cannot satisfy without visiting them.
 *
 * A key is a value the basket either has or has not: a category or sku of one of its lines, an
 * entered coupon, or the value of a text fact. A clause is a disjunction of keys (at least one
 * must be present); a condition's needs are two conjunctions of clauses: those that hold whenever
 * the condition holds (`holds`), and those that hold whenever it fails (`fails`, for `not`).
 * Every clause here is *necessary*, never sufficient: when a basket lacks every key of a
 * necessary clause, the condition certainly fails; when it has one, the condition still has to be
 * tested. An empty conjunction says nothing (the rule is always visited).
 */

/** Where a key's value is looked up in the basket. */
export type Dimension = 'category' | 'sku' | 'coupon' | 'cart.currency' | 'customer.id' | 'customer.segment';

export interface Key {
  readonly dim: Dimension;
  readonly value: string;
}

/** At least one of these keys must be in the basket. */
export type Clause = readonly Key[];

export interface Needs {
  /** Clauses that all hold whenever the condition holds. */
  readonly holds: readonly Clause[];
  /** Clauses that all hold whenever the condition fails. */
  readonly fails: readonly Clause[];
}

export const NOTHING_NEEDED: Needs = { holds: [], fails: [] };

export const needsKey = (dim: Dimension, values: readonly string[], negated = false): Needs => {
  const clause = [...new Set(values)].map((value) => ({ dim, value }));
  return negated ? { holds: [], fails: [clause] } : { holds: [clause], fails: [] };
};

/**
 * A guess of how many baskets hold a key of each dimension, relative to one another: a given sku
 * or customer is in few baskets, a coupon in few more, a category in many, a segment in a large
 * share, a currency in nearly all. No statistics are kept; the guess only chooses which necessary
 * clause a rule is indexed by, never whether a rule is visited correctly.
 */
const WEIGHT: Readonly<Record<Dimension, number>> = {
  sku: 1,
  'customer.id': 1,
  coupon: 2,
  category: 4,
  'customer.segment': 8,
  'cart.currency': 32,
};

/** Estimated share of baskets that satisfy the clause (lower is more selective). */
export const costOf = (clause: Clause): number => clause.reduce((sum, k) => sum + WEIGHT[k.dim], 0);

/** The most selective clause of a conjunction, or undefined when it has none. */
export function cheapest(conjunction: readonly Clause[]): Clause | undefined {
  let best: Clause | undefined;
  for (const c of conjunction) if (!best || costOf(c) < costOf(best)) best = c;
  return best;
}

/** Every conjunction holds: all their clauses hold. */
export const allOfNeeds = (conjunctions: readonly (readonly Clause[])[]): Clause[] => conjunctions.flat();

/**
 * At least one of the conjunctions holds. Each of them implies its own cheapest clause, so the
 * union of those clauses is necessary; when one conjunction is empty nothing is.
 */
export function anyOfNeeds(conjunctions: readonly (readonly Clause[])[]): Clause[] {
  const union = new Map<string, Key>();
  for (const c of conjunctions) {
    const clause = cheapest(c);
    if (!clause) return [];
    for (const k of clause) union.set(`${k.dim}\u0000${k.value}`, k);
  }
  return union.size > 0 ? [[...union.values()]] : [];
}
