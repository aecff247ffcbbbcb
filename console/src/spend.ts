/**
 * Spend against budget for the Agents page: GraphQL `spendPolicies` (spend:read or spend:admin),
 * when the gateway's schema has it. A schema without the field answers a validation error; the
 * page then says that spend policies are not available instead of showing an error.
 */
import { ApiError, graphqlRaw } from './api.ts';
import { operation } from './operations.ts';
import type { SpendPolicy } from './spend-policy.ts';

export { effectivePolicy, type SpendPolicy } from './spend-policy.ts';

/** The registered SpendPolicies (schemas/operations/spend-policies.graphql). */
const SPEND = operation('SpendPolicies');

/** The policies (first 500 by subject), or null when this gateway's schema has no spend policies. */
export async function loadSpend(): Promise<SpendPolicy[] | null> {
  const { status, body } = await graphqlRaw(SPEND, { first: 500 });
  const first = body.errors?.[0];
  if (!first) return (body.data as { spendPolicies: SpendPolicy[] }).spendPolicies;
  const code = first.extensions?.code;
  if (code === 'GRAPHQL_VALIDATION_FAILED' && /Cannot query field "spendPolicies"/.test(first.message))
    return null;
  throw new ApiError(
    code === 'FORBIDDEN' ? 403 : code === 'UNAUTHENTICATED' ? 401 : status,
    code ?? 'GraphQL error',
    first.message,
    code,
  );
}
