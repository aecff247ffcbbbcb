/**
 * GraphQL demand control, in process: what the gateway spends on a document it has not seen
 * before (parse, then validate with the supergraph's API schema and the default limits, as
 * Apollo Server does on a document-store miss), for the CartQuote operation (the baseline) and
 * for documents the limits refuse. A known document (document-store hit) skips all of this.
 *   npm run bench -- --only graphql-demand
 */
import { readFileSync } from 'node:fs';
import { type GraphQLSchema, parse, specifiedRules, validate } from 'graphql';
import { gatewaySchema } from '../../ci/operations.ts';
import { useOperationLimits } from '../../gateway/graphql/limits.ts';
import { loadConfig } from '../../lib/config.ts';
import type { FnScenario, Scenario } from '../harness.ts';

const GROUP = 'graphql-demand';
const BASELINE = 'CartQuote, first sight: parse + validate with the limits';
const CART_QUOTE = readFileSync(
  new URL('../../schemas/operations/cart-quote.graphql', import.meta.url),
  'utf8',
);

const config = loadConfig({});
const limits = useOperationLimits({
  maxTokens: config.GRAPHQL_MAX_TOKENS,
  maxDepth: config.GRAPHQL_MAX_DEPTH,
  maxAliases: config.GRAPHQL_MAX_ALIASES,
  maxRootFields: config.GRAPHQL_MAX_ROOT_FIELDS,
  maxDirectives: config.GRAPHQL_MAX_DIRECTIVES,
  maxCost: config.GRAPHQL_MAX_COST,
});

let schema: Promise<GraphQLSchema> | undefined;

/** Parses and validates `source` as the gateway would; a refusal (thrown or reported) is the expected outcome for most rows. */
function firstSight(
  name: string,
  source: string,
  opts: { limits?: boolean; iterations?: number } = {},
): FnScenario {
  const withLimits = opts.limits ?? true;
  return {
    kind: 'fn',
    group: GROUP,
    name,
    ...(name === BASELINE ? {} : { baseline: BASELINE }),
    iterations: opts.iterations ?? 2_000,
    async setup() {
      schema ??= gatewaySchema();
      const s = await schema;
      const rules = withLimits ? [...specifiedRules, ...limits.validationRules] : specifiedRules;
      return {
        run() {
          try {
            return validate(s, parse(source, withLimits ? limits.parseOptions : {}), rules).length;
          } catch {
            return -1; // the parser's token limit
          }
        },
      };
    },
  };
}

const aliases5000 = `{ ${Array.from({ length: 5_000 }, (_, i) => `a${i}: products(skus: []) { sku }`).join(' ')} }`;
const oneMegabyte = `{ products(skus: []) { ${'sku '.repeat(262_144)}} }`;
// the worst case under the token limit: one field repeated, so graphql-js's overlapping-fields
// check compares every pair (it has a work budget of its own and aborts beyond it)
const sameField = `{ products(skus: []) { ${'sku '.repeat(config.GRAPHQL_MAX_TOKENS - 11)}} }`;

export const scenarios: Scenario[] = [
  firstSight(BASELINE, CART_QUOTE),
  firstSight('CartQuote, first sight: parse + validate, no limits', CART_QUOTE, { limits: false }),
  firstSight('5,000-alias document (170 kB): refused at the token limit', aliases5000, { iterations: 500 }),
  firstSight('1 MB document: refused at the token limit', oneMegabyte, { iterations: 500 }),
  firstSight('1 MB document: parsed with no token limit', oneMegabyte, { limits: false, iterations: 20 }),
  firstSight('one field repeated up to the token limit: validated', sameField, { iterations: 200 }),
];
