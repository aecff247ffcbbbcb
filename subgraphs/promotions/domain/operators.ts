import type { Basket } from './basket.ts';
import { normaliseCoupon } from './basket.ts';
import type { Check } from './check.ts';
import { type FactKind, numberOf, textOf } from './facts.ts';
import { type Dimension, type Needs, NOTHING_NEEDED, needsKey } from './needs.ts';

export type Test = (b: Basket) => boolean;

/**
 * Operators by name. Each one compiles its operand once (validated, converted to cents, turned
 * into a Set) into a closure over the basket; evaluation then does no parsing at all.
 */
interface Operator {
  readonly kinds: readonly FactKind[];
  compile(fact: string, kind: FactKind, operand: unknown, at: string, check: Check): Test | undefined;
  /**
   * The basket keys the condition needs (needs.ts), for the rule index; called only with an
   * operand that compiled. Absent: the operator needs no key (numbers, negative forms).
   */
  needs?(fact: string, kind: FactKind, operand: unknown): Needs;
}

/** The text facts (textOf) are their own index dimensions: their value is the key. */
const textDimension = (fact: string) => fact as Dimension;

const comparison =
  (cmp: (a: number, b: number) => boolean): Operator['compile'] =>
  (fact, kind, operand, at, check) => {
    const read = numberOf[fact];
    const v = kind === 'money' ? check.cents(operand, at) : check.number(operand, at);
    if (v === undefined || !read) return undefined;
    return (b) => cmp(read(b), v);
  };

const numeric = (cmp: (a: number, b: number) => boolean): Operator => ({
  kinds: ['count', 'money'],
  compile: comparison(cmp),
});

/** equal / not_equal on numbers (exact; money in cents) and on text (absent text is unequal). */
const equality = (negate: boolean): Operator => ({
  kinds: ['count', 'money', 'text'],
  compile(fact, kind, operand, at, check) {
    if (kind === 'text') {
      const read = textOf[fact];
      const v = check.string(operand, at, { max: 256 });
      if (v === undefined || !read) return undefined;
      return negate ? (b) => read(b) !== v : (b) => read(b) === v;
    }
    return comparison(negate ? (a, b) => a !== b : (a, b) => a === b)(fact, kind, operand, at, check);
  },
  // `equal` holds only when the text is present and is the operand; `not_equal` fails only then.
  needs: (fact, kind, operand) =>
    kind === 'text' ? needsKey(textDimension(fact), [operand as string], negate) : NOTHING_NEEDED,
});

/** in / not_in: membership in a list given in the rule (a Set after compilation). */
const membership = (negate: boolean): Operator => ({
  kinds: ['count', 'money', 'text'],
  compile(fact, kind, operand, at, check) {
    const list = check.array(operand, at, 1, 1000);
    if (!list) return undefined;
    if (kind === 'text') {
      const read = textOf[fact];
      const values = list.map((v, i) => check.string(v, `${at}/${i}`, { max: 256 }));
      if (!read || values.includes(undefined)) return undefined;
      const set = new Set(values as string[]);
      return negate
        ? (b) => {
            const v = read(b);
            return v === undefined || !set.has(v);
          }
        : (b) => {
            const v = read(b);
            return v !== undefined && set.has(v);
          };
    }
    const read = numberOf[fact];
    const values = list.map((v, i) =>
      kind === 'money' ? check.cents(v, `${at}/${i}`) : check.number(v, `${at}/${i}`),
    );
    if (!read || values.includes(undefined)) return undefined;
    const set = new Set(values as number[]);
    return negate ? (b) => !set.has(read(b)) : (b) => set.has(read(b));
  },
  // `in` holds only when the text is one of the list; `not_in` fails only then.
  needs: (fact, kind, operand) =>
    kind === 'text' ? needsKey(textDimension(fact), operand as string[], negate) : NOTHING_NEEDED,
});

export const OPERATORS: Readonly<Record<string, Operator>> = {
  equal: equality(false),
  not_equal: equality(true),
  in: membership(false),
  not_in: membership(true),
  less_than: numeric((a, b) => a < b),
  less_than_inclusive: numeric((a, b) => a <= b),
  greater_than: numeric((a, b) => a > b),
  greater_than_inclusive: numeric((a, b) => a >= b),
  contains_category: {
    kinds: ['items'],
    compile(_f, _k, operand, at, check) {
      const v = check.string(operand, at, { max: 64 });
      return v === undefined ? undefined : (b) => b.categories.has(v);
    },
    needs: (_f, _k, operand) => needsKey('category', [operand as string]),
  },
  contains_sku: {
    kinds: ['items'],
    compile(_f, _k, operand, at, check) {
      const v = check.string(operand, at, { max: 64 });
      return v === undefined ? undefined : (b) => b.skus.has(v);
    },
    needs: (_f, _k, operand) => needsKey('sku', [operand as string]),
  },
  /** coupon.codes contains a code (case-insensitive, like every coupon match). */
  contains: {
    kinds: ['codes'],
    compile(_f, _k, operand, at, check) {
      const v = check.string(operand, at, { max: 64 });
      if (v === undefined) return undefined;
      const code = normaliseCoupon(v);
      return (b) => b.couponSet.has(code);
    },
    needs: (_f, _k, operand) => needsKey('coupon', [normaliseCoupon(operand as string)]),
  },
};
