import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLError, ParseOptions, ValidationContext, ValidationRule } from 'graphql';
import { DemandCode, LimitError } from './codes.ts';
import { maxRootFieldsRule } from './root-fields.ts';

/** Per-operation limits (per document for tokens); see docs/graphql-demand-control.md. */
export interface OperationLimits {
  readonly maxTokens: number;
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxRootFields: number;
  readonly maxDirectives: number;
  readonly maxCost: number;
}

/**
 * The operation limits as Apollo Server options: the token limit is a parse option, the others
 * validation rules. Both run once per distinct document: Apollo's document store keeps the
 * parsed and validated document by hash, so a known operation is not measured again.
 *
 * Tokens: graphql-js's own `maxTokens` (the parser stops at token n + 1, so a 5,000-alias or
 * 1 MB document costs no more than n tokens of lexing). graphql-armor's max-tokens is not used:
 * its Apollo plugin parses a second time in `parsingDidStart`, and Apollo Server 5 answers an
 * error thrown there with a 500 (test/foundation/demand-control.test.ts shows it).
 *
 * Depth, aliases, directives, cost: graphql-armor's rules, fragments followed and memoised (a
 * fragment spread many times is walked once, a cycle does not loop). Armor would throw from
 * inside `validate` by default (a 500); `propagateOnRejection: false` with a reporter makes each
 * refusal an ordinary validation error, which Apollo answers with HTTP 400 before any plan runs.
 */
export function useOperationLimits(limits: OperationLimits): {
  parseOptions: ParseOptions;
  validationRules: ValidationRule[];
} {
  const reporter = (code: DemandCode) => ({
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(new LimitError(code, error.message.replace(/^Syntax Error: /, ''))),
    ],
  });
  const armor = new ApolloArmor({
    maxTokens: { enabled: false },
    // Apollo's own hideSchemaDetailsFromClientErrors does this (demand-control.ts).
    blockFieldSuggestion: { enabled: false },
    maxDepth: {
      n: limits.maxDepth,
      // Depth as the response nests: a fragment adds no level of its own.
      flattenFragments: true,
      ...reporter(DemandCode.MAX_DEPTH),
    },
    // Every alias counts, __typename's too (armor exempts it by default).
    maxAliases: { n: limits.maxAliases, allowList: [], ...reporter(DemandCode.MAX_ALIASES) },
    maxDirectives: { n: limits.maxDirectives, ...reporter(DemandCode.MAX_DIRECTIVES) },
    costLimit: { maxCost: limits.maxCost, flattenFragments: true, ...reporter(DemandCode.COST) },
  });
  const reject = (context: ValidationContext, error: GraphQLError) => context.reportError(error);
  return {
    parseOptions: { maxTokens: limits.maxTokens },
    validationRules: [...armor.protect().validationRules, maxRootFieldsRule(limits.maxRootFields, reject)],
  };
}
