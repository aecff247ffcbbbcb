import { Problem } from '../../lib/problem.ts';
import type { Violation } from './contract.ts';

/** Every refusal of the operator API, as a typed value (mapped to HTTP by lib/problem.ts). */
export const tokenRequired = (role: string, detail: string, invalid = false) =>
  new Problem(
    401,
    'operator-token-required',
    'Operator token required',
    detail,
    { required_role: role },
    {
      'www-authenticate': `Bearer realm="operator", scope="${role}"${invalid ? ', error="invalid_token"' : ''}`,
    },
  );

export const insufficientRole = (role: string) =>
  new Problem(403, 'insufficient-role', 'Insufficient role', `this operation needs the ${role} role`, {
    required_role: role,
  });

export const agentRefused = () =>
  new Problem(
    403,
    'agent-operator-refused',
    'Not available to agents',
    'the operator API is not served to agent identities (X-Spiffe-Id or a SPIFFE client certificate)',
  );

export const badQuery = (errors: readonly Violation[]) =>
  new Problem(
    400,
    'invalid-query',
    'Invalid query parameters',
    `the query string is malformed: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`,
    { errors },
  );

export const invalidBody = (errors: readonly Violation[]) =>
  new Problem(
    422,
    'invalid-request',
    'Invalid request body',
    `the request body does not match the contract: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`,
    { errors },
  );

export const stateUnavailable = () =>
  new Problem(
    503,
    'operator-state-unavailable',
    'State unavailable',
    'the agent state or the audit store did not answer; retry shortly',
    {},
    { 'retry-after': '2' },
  );
