import type { Basket } from './basket.ts';
import type { Check } from './check.ts';
import { FACTS } from './facts.ts';
import { allOfNeeds, anyOfNeeds, type Needs, NOTHING_NEEDED } from './needs.ts';
import { OPERATORS, type Test } from './operators.ts';
import type { FailedCondition } from './shapes.ts';

/** Why a condition tree failed: the failing place plus one sentence for people. */
export interface Failure {
  condition: FailedCondition;
  detail: string;
}

/**
 * A compiled condition: `test` is the hot path (closures only); `explain` runs only for a rule
 * that failed, to say which condition failed and with what basket value; `needs` is what the
 * basket must hold for it to hold or to fail (needs.ts), for the rule index.
 */
export interface CompiledCondition {
  readonly test: Test;
  readonly explain: (b: Basket) => Failure | undefined;
  readonly needs: Needs;
}

const MAX_DEPTH = 8;
const MAX_CHILDREN = 50;

/** Compiles `all` / `any` / `not` groups (nested) and `{ fact, operator, value }` leaves. */
export function compileCondition(
  node: unknown,
  at: string,
  check: Check,
  depth = 0,
): CompiledCondition | undefined {
  const o = check.object(node, at);
  if (!o) return undefined;
  if (depth > MAX_DEPTH) return check.fail(at, `conditions nest deeper than ${MAX_DEPTH} levels`);
  if ('all' in o || 'any' in o) {
    const key = 'all' in o ? 'all' : 'any';
    check.onlyKeys(o, at, [key]);
    const list = check.array(o[key], `${at}/${key}`, key === 'all' ? 0 : 1, MAX_CHILDREN);
    if (!list) return undefined;
    const children = list.map((c, i) => compileCondition(c, `${at}/${key}/${i}`, check, depth + 1));
    if (children.includes(undefined)) return undefined;
    return key === 'all'
      ? allOf(children as CompiledCondition[])
      : anyOf(children as CompiledCondition[], `${at}/any`);
  }
  if ('not' in o) {
    check.onlyKeys(o, at, ['not']);
    const inner = compileCondition(o.not, `${at}/not`, check, depth + 1);
    if (!inner) return undefined;
    return {
      needs: { holds: inner.needs.fails, fails: inner.needs.holds },
      test: (b) => !inner.test(b),
      explain: (b) =>
        inner.test(b)
          ? { condition: { pointer: `${at}/not` }, detail: `the condition at ${at}/not holds, and must not` }
          : undefined,
    };
  }
  return compileLeaf(o, at, check);
}

function allOf(children: CompiledCondition[]): CompiledCondition {
  // Unrolled for the common sizes: a closure call per child is what the hot path costs.
  const [a, b] = children;
  const test: Test =
    children.length === 0
      ? () => true
      : children.length === 1 && a
        ? a.test
        : children.length === 2 && a && b
          ? (x) => a.test(x) && b.test(x)
          : (x) => {
              for (let i = 0; i < children.length; i++) if (!children[i]?.test(x)) return false;
              return true;
            };
  return {
    test,
    needs: {
      holds: allOfNeeds(children.map((c) => c.needs.holds)),
      fails: anyOfNeeds(children.map((c) => c.needs.fails)),
    },
    explain: (x) => {
      for (let i = 0; i < children.length; i++) {
        const c = children[i];
        if (c && !c.test(x)) return c.explain(x);
      }
      return undefined;
    },
  };
}

function anyOf(children: CompiledCondition[], at: string): CompiledCondition {
  return {
    needs: {
      holds: anyOfNeeds(children.map((c) => c.needs.holds)),
      fails: allOfNeeds(children.map((c) => c.needs.fails)),
    },
    test: (x) => {
      for (let i = 0; i < children.length; i++) if (children[i]?.test(x)) return true;
      return false;
    },
    explain: (x) => {
      if (children.some((c) => c.test(x))) return undefined;
      const first = children[0]?.explain(x);
      return {
        condition: { pointer: at },
        detail: `none of the ${children.length} conditions at ${at} holds${first ? ` (first: ${first.detail})` : ''}`,
      };
    },
  };
}

function compileLeaf(o: Record<string, unknown>, at: string, check: Check): CompiledCondition | undefined {
  check.onlyKeys(o, at, ['fact', 'operator', 'value']);
  const factName = check.string(o.fact, `${at}/fact`, { max: 64 });
  const opName = check.string(o.operator, `${at}/operator`, { max: 64 });
  if (!('value' in o)) check.fail(`${at}/value`, 'is required');
  if (factName === undefined || opName === undefined) return undefined;
  const fact = FACTS[factName];
  if (!fact)
    return check.fail(`${at}/fact`, `unknown fact ${factName}; known: ${Object.keys(FACTS).join(', ')}`);
  const op = OPERATORS[opName];
  if (!op)
    return check.fail(
      `${at}/operator`,
      `unknown operator ${opName}; known: ${Object.keys(OPERATORS).join(', ')}`,
    );
  if (!op.kinds.includes(fact.kind))
    return check.fail(`${at}/operator`, `operator ${opName} does not apply to the fact ${factName}`);
  if (!('value' in o)) return undefined;
  const test = op.compile(factName, fact.kind, o.value, `${at}/value`, check);
  if (!test) return undefined;
  const expected = o.value;
  // The sentence around the basket's value is fixed per condition: build it once.
  const prefix = `${factName} is `;
  const suffix = `; the rule needs ${opName} ${JSON.stringify(expected)}`;
  return {
    test,
    needs: op.needs?.(factName, fact.kind, o.value) ?? NOTHING_NEEDED,
    explain: (b) => {
      if (test(b)) return undefined;
      let actual = b.shown.get(factName);
      if (!actual) {
        const value = fact.describe(b);
        actual = { value, text: JSON.stringify(value) };
        b.shown.set(factName, actual);
      }
      return {
        condition: { pointer: at, fact: factName, operator: opName, expected, actual: actual.value },
        detail: prefix + actual.text + suffix,
      };
    },
  };
}
