import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { insufficientScope, invalidToken } from '../problems.ts';
import type { ScopePolicy } from './policy.ts';
import { bearerOf, type TokenVerifier } from './token.ts';

export interface ScopeOptions {
  readonly policy: ScopePolicy;
  readonly tokens: TokenVerifier;
  readonly required: string;
  readonly clock: Clock;
}

/**
 * Step 2 (onRequest): may this identity do this? The policy grants scopes to SPIFFE IDs; a
 * bearer token, when sent, must be valid, be about the same workload (`sub` = SPIFFE ID), and
 * its `scope` narrows the grant. No token: the grant alone decides (the spec's endpoint lists
 * X-Spiffe-Id as its only required header).
 */
export function scopeStep(o: ScopeOptions) {
  return async function authorize(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    if (!id) return;
    let granted = o.policy.grants(id).has(o.required);
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === null) {
      req.agent.reason = 'token: Authorization is not a bearer JWT';
      return sendProblem(reply, invalidToken('not a bearer JWT'), req.url);
    }
    if (bearer !== undefined) {
      const v = await o.tokens.verify(bearer, o.clock.now());
      if (!v.ok) {
        req.agent.reason = `token: ${v.reason}`;
        return sendProblem(reply, invalidToken(v.reason), req.url);
      }
      if (v.token.subject !== id.id) {
        req.agent.reason = 'token: sub is not the caller SPIFFE ID';
        return sendProblem(reply, invalidToken('sub is not the caller SPIFFE ID'), req.url);
      }
      granted &&= v.token.scopes.has(o.required);
    }
    if (granted) return;
    req.agent.reason = `scope: ${o.required} not granted`;
    return sendProblem(reply, insufficientScope(o.required), req.url);
  };
}
