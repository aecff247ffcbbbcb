import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Caller, hasAnyRole } from '../../lib/auth/caller.ts';
import type { CallerVerifier } from '../../lib/auth/jwt.ts';
import { foreignOrigin, type ServedHosts } from '../../lib/http/served-hosts.ts';
import { sendProblem } from '../../lib/problem.ts';
import { contractAudience } from '../contracts/agent-identity.ts';
import { agentRefused, insufficientRole, tokenRequired } from './problems.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator, once the guard has let the request through. */
    operator?: Caller;
  }
}

export interface GuardOptions {
  readonly verifier: CallerVerifier;
  readonly trustDomains: readonly string[];
}

const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/**
 * onRequest, before anything is parsed or validated: agent identities are refused (the operator
 * API is no part of the agent contract), then a bearer token (401) with `role` (403). The
 * decision is the API's: the console has no other way in.
 */
export function operatorGuard(o: GuardOptions, role: string) {
  return async function guard(req: FastifyRequest, reply: FastifyReply) {
    const instance = req.url.split('?')[0];
    const audience = contractAudience(req, o.trustDomains);
    if (audience.kind === 'agent') {
      req.log.warn(
        { traceId: req.traceId, reason: audience.reason, path: instance },
        'operator API refused to agent',
      );
      return sendProblem(reply, agentRefused(), instance);
    }
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (!token)
      return sendProblem(
        reply,
        tokenRequired(role, `this operation needs a bearer token with the ${role} role`),
        instance,
      );
    let caller: Caller;
    try {
      caller = await o.verifier.verify(token);
    } catch {
      return sendProblem(reply, tokenRequired(role, 'the bearer token does not verify', true), instance);
    }
    if (!hasAnyRole(caller, [role])) {
      req.log.warn(
        { traceId: req.traceId, subject: caller.subject, role, path: instance },
        'operator role missing',
      );
      return sendProblem(reply, insufficientRole(role), instance);
    }
    req.operator = caller;
  };
}

/**
 * onRequest of the operator API's state-changing routes, before the token is looked at: a call
 * from a page of another origin is refused 403 `foreign-origin` (lib/http/served-hosts.ts). The
 * console's own pages send an Origin this system serves; servers and scripts send none. As for
 * GraphQL mutations (gateway/graphql/foreign-origin.ts), this is a second wall: the bearer token
 * is no ambient credential a foreign page could borrow (docs/console.md, "Hardening").
 */
export function originGuard(served: Pick<ServedHosts, 'origin'>) {
  return async function sameOrigin(req: FastifyRequest, reply: FastifyReply) {
    const origin = req.headers.origin;
    if (origin === undefined || served.origin(origin, req.headers.host)) return;
    req.log.warn(
      { traceId: req.traceId, origin: origin.slice(0, 200) },
      'operator call from a foreign origin',
    );
    return sendProblem(reply, foreignOrigin(), req.url.split('?')[0]);
  };
}
