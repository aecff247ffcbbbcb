import {
  type ASTVisitor,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { DemandCode, LimitError } from './codes.ts';

/**
 * At most `n` fields in an operation's root selection set, counting the fields its fragments
 * and inline fragments put at the root (each spread counts again). Hand-written because
 * graphql-armor has no root-field limit; it counts the way Apollo Router's max_root_fields does.
 * A root field is one entry point into a subgraph, so this bounds the fan-out of a single
 * operation where the alias limit alone would let `{ a b c d … }` through.
 */
export function maxRootFieldsRule(
  n: number,
  reject: (context: ValidationContext, error: LimitError) => void,
) {
  const rule: ValidationRule = (context): ASTVisitor => {
    // Per fragment, its root-field count: each fragment is walked once, so a "fragment bomb"
    // (each fragment spreading the next one twice) costs linear time, not exponential.
    const counted = new Map<string, number>();
    const count = (set: SelectionSetNode): number => {
      let total = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) total++;
        else if (selection.kind === Kind.INLINE_FRAGMENT) total += count(selection.selectionSet);
        else {
          const name = selection.name.value;
          const known = counted.get(name);
          if (known !== undefined) {
            total += known;
            continue;
          }
          const fragment = context.getFragment(name);
          // 0 while being counted: a cycle adds nothing here (NoFragmentCyclesRule refuses it).
          counted.set(name, 0);
          const own = fragment ? count(fragment.selectionSet) : 0;
          counted.set(name, own);
          total += own;
        }
      }
      return total;
    };
    return {
      OperationDefinition(operation) {
        const found = count(operation.selectionSet);
        if (found > n) {
          reject(
            context,
            new LimitError(DemandCode.MAX_ROOT_FIELDS, `Root fields limit of ${n} exceeded, found ${found}.`),
          );
        }
      },
    };
  };
  return rule;
}
