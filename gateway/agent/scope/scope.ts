import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import { type Problem, sendProblem } from '../../../lib/problem.ts';
import { insufficientScope, invalidToken } from '../problems.ts';
import type { ScopePolicy } from './policy.ts';
import { bearerOf, type TokenVerifier } from './token.ts';

export interface ScopeOptions {
  readonly policy: ScopePolicy;
  readonly tokens: TokenVerifier;
  readonly required: string;
  readonly clock: Clock;
}

export type ScopesVerdict =
  | { readonly ok: true; readonly scopes: ReadonlySet<string> }
  | { readonly ok: false; readonly reason: string; readonly problem: Problem };

/**
 * The scopes a verified identity holds: the policy grants scopes to SPIFFE IDs; a bearer
 * token, when sent, must be valid, be about the same workload (`sub` = SPIFFE ID), and its
 * `scope` narrows the grant. No token: the grant alone decides (the spec's endpoint lists
 * X-Spiffe-Id as its only required header). Shared by the scope step and the MCP tool list.
 */
export async function callerScopes(
  id: SpiffeId,
  authorization: string | undefined,
  o: Omit<ScopeOptions, 'required'>,
): Promise<ScopesVerdict> {
  const granted = o.policy.grants(id);
  const bearer = bearerOf(authorization);
  if (bearer === undefined) return { ok: true, scopes: granted };
  if (bearer === null)
    return {
      ok: false,
      reason: 'token: Authorization is not a bearer JWT',
      problem: invalidToken('not a bearer JWT'),
    };
  const v = await o.tokens.verify(bearer, o.clock.now());
  if (!v.ok) return { ok: false, reason: `token: ${v.reason}`, problem: invalidToken(v.reason) };
  if (v.token.subject !== id.id)
    return {
      ok: false,
      reason: 'token: sub is not the caller SPIFFE ID',
      problem: invalidToken('sub is not the caller SPIFFE ID'),
    };
  return { ok: true, scopes: new Set([...granted].filter((s) => v.token.scopes.has(s))) };
}

/** Step 2 (onRequest): may this identity do this? 401 for a bad token, 403 without the scope. */
export function scopeStep(o: ScopeOptions) {
  return async function authorize(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    if (!id) return;
    const v = await callerScopes(id, req.headers.authorization, o);
    if (!v.ok) {
      req.agent.reason = v.reason;
      return sendProblem(reply, v.problem, req.url);
    }
    if (v.scopes.has(o.required)) return;
    req.agent.reason = `scope: ${o.required} not granted`;
    return sendProblem(reply, insufficientScope(o.required), req.url);
  };
}
