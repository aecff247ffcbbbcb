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

/** A tree size the audit log does not reach: it holds fewer entries than asked (it may have been cut). */
export const beyondTree = (pointer: string, asked: number, size: number) =>
  new Problem(
    409,
    'beyond-tree',
    'Beyond the audit tree',
    `the audit log holds ${size} entries, fewer than the ${asked} asked for (${pointer.slice(1)}): a log that once had them was cut`,
    { tree_size: size },
  );

/** ORDER_STORE=memory: no Merkle tree over the audit log. */
export const proofsUnavailable = () =>
  new Problem(
    503,
    'audit-proofs-unavailable',
    'Audit proofs unavailable',
    'this gateway keeps its audit log in memory (ORDER_STORE=memory): proofs need the durable audit store',
    {},
    { 'retry-after': '60' },
  );
