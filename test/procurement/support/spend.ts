/** Spend policies for tests that need one: set through the GraphQL API, as an operator does. */
import { expect } from 'vitest';
import type { TestSystem } from '../../../harness/system.ts';

const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';

/**
 * A daily 1000.00 USD budget for `subject` whose orders above 100.00 wait for approval; `over`
 * changes or adds fields of the input. `token` needs `spend:admin`.
 */
export async function setApprovalPolicy(
  sys: Pick<TestSystem, 'gql'>,
  token: string,
  subject: string,
  over: Record<string, unknown> = {},
): Promise<void> {
  const r = await sys.gql(SET, {
    token,
    variables: {
      input: { subject, currency: 'USD', period: 'DAY', budget: '1000.00', approvalAbove: '100.00', ...over },
    },
  });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
}
