import type { FastifyRequest } from 'fastify';
import { hasAnyRole } from '../../../lib/auth/caller.ts';
import type { CallerVerifier } from '../../../lib/auth/jwt.ts';
import { callerOf } from '../../../lib/graphql/caller-context.ts';
import { Problem } from '../../../lib/problem.ts';

/**
 * Who may ask the edge to check a quote token: payment (and other back-office services) with a
 * bearer token granting `quotes:verify`. The check itself needs no secret — anyone can verify
 * offline against the JWKS with verifyQuoteToken — but an open endpoint would be a free CPU
 * oracle (one ECDSA verification per call) for anyone on the internet.
 */
export const VERIFY_ROLES = ['quotes:verify'] as const;

const unauthorized = (detail: string) =>
  new Problem(401, 'unauthenticated', 'Unauthorized', detail, {}, { 'www-authenticate': 'Bearer' });

export async function requireVerifier(req: FastifyRequest, verifier: CallerVerifier): Promise<void> {
  let caller: Awaited<ReturnType<typeof callerOf>>['caller'];
  try {
    caller = (await callerOf(req, verifier)).caller;
  } catch (err) {
    throw unauthorized(err instanceof Error ? err.message : 'invalid bearer token');
  }
  if (!caller.authenticated) throw unauthorized('a bearer token granting quotes:verify is required');
  if (!hasAnyRole(caller, VERIFY_ROLES)) {
    throw new Problem(403, 'forbidden', 'Forbidden', `requires one of the roles: ${VERIFY_ROLES.join(', ')}`);
  }
}
