import { GraphQLError, type GraphQLFormattedError } from 'graphql';

/**
 * The `errors[0].extensions.code` of each demand-control refusal. The operation-limit and
 * safelist codes are the ones Apollo Router answers for the same refusals, so a client (or a
 * dashboard) written against either gateway reads them the same way. All are HTTP 400 except
 * REQUEST_TOO_LARGE (413); none is retryable as is.
 */
export const DemandCode = {
  MAX_TOKENS: 'MAX_TOKENS_LIMIT',
  MAX_DEPTH: 'MAX_DEPTH_LIMIT',
  MAX_ALIASES: 'MAX_ALIASES_LIMIT',
  MAX_ROOT_FIELDS: 'MAX_ROOT_FIELDS_LIMIT',
  MAX_DIRECTIVES: 'MAX_DIRECTIVES_LIMIT',
  COST: 'COST_ESTIMATED_TOO_EXPENSIVE',
  /** Safelist mode: a document (or an APQ registration) whose hash is not in the manifest. */
  NOT_IN_SAFELIST: 'QUERY_NOT_IN_SAFELIST',
  /** Safelist mode: an operation id (APQ hash) that is not in the manifest. */
  NOT_IN_LIST: 'PERSISTED_QUERY_NOT_IN_LIST',
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
} as const;
export type DemandCode = (typeof DemandCode)[keyof typeof DemandCode];

/** A validation error that names its limit. Apollo wraps it (code GRAPHQL_VALIDATION_FAILED). */
export class LimitError extends GraphQLError {
  constructor(
    readonly limitCode: DemandCode,
    message: string,
  ) {
    super(message, { extensions: { code: limitCode } });
  }
}

// graphql-js's own message when ParseOptions.maxTokens stops the parser (16.x says "more that").
const TOKEN_LIMIT = /^Syntax Error: Document contains more th(?:an|at) (\d+) tokens/;

/** The demand-control code of an error Apollo reports, if it is a limit's refusal. */
export function demandCodeOf(error: unknown): DemandCode | undefined {
  if (!(error instanceof GraphQLError)) return undefined;
  if (error.originalError instanceof LimitError) return error.originalError.limitCode;
  if (error.extensions.code === 'GRAPHQL_PARSE_FAILED' && TOKEN_LIMIT.test(error.message)) {
    return DemandCode.MAX_TOKENS;
  }
  return undefined;
}

/**
 * Apollo's formatError hook: Apollo gives every validation error the code
 * GRAPHQL_VALIDATION_FAILED and every parse error GRAPHQL_PARSE_FAILED (still HTTP 400); this
 * puts back the limit's own code, and words the token limit as the other limits are worded.
 */
export function formatDemandError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const code = demandCodeOf(error);
  if (!code) return formatted;
  const tokens = code === DemandCode.MAX_TOKENS ? TOKEN_LIMIT.exec(formatted.message) : null;
  return {
    ...formatted,
    ...(tokens
      ? { message: `Token limit of ${tokens[1]} exceeded: parsing stopped at the location given.` }
      : {}),
    extensions: { ...formatted.extensions, code },
  };
}

/** A GraphQL-over-HTTP error body, for the refusals answered before Apollo sees the request. */
export const errorBody = (code: DemandCode, message: string) => ({
  errors: [{ message, extensions: { code } }],
});
