import type { FastifyRequest } from 'fastify';
import { anonymous, type Caller } from '../auth/caller.ts';
import { type RequestContext, requestContext } from '../auth/context.ts';
import type { CallerVerifier } from '../auth/jwt.ts';
import { forbidden, unauthenticated } from '../auth/permissions.ts';
import { GATEWAY_SECRET_HEADER, sameSecret } from '../auth/shared-secret.ts';

const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/** Verifies `Authorization: Bearer …` when present; a bad token is UNAUTHENTICATED, never anonymous. */
export async function callerOf(
  req: FastifyRequest,
  verifier: CallerVerifier,
): Promise<{ caller: Caller; bearer?: string }> {
  const header = req.headers.authorization;
  if (header === undefined) return { caller: anonymous };
  const m = BEARER.exec(header);
  if (!m?.[1]) throw unauthenticated('the Authorization header is not a bearer token');
  try {
    return { caller: await verifier.verify(m[1]), bearer: m[1] };
  } catch (err) {
    throw unauthenticated(err instanceof Error ? err.message : 'invalid token');
  }
}

/**
 * Gateway: the context of a request from the caller's token. callerOf's answer is this request's
 * own object: extended in place, since a clone that is then extended (`{ ...caller, traceId }`)
 * gets a hidden class of its own in V8 on every request (docs/performance.md, "Fifth pass").
 */
export const gatewayContext =
  (verifier: CallerVerifier) =>
  async (req: FastifyRequest): Promise<RequestContext> =>
    requestContext(Object.assign(await callerOf(req, verifier), { traceId: req.traceId }));

/** Subgraph behind a remote gateway: only calls carrying the gateway secret are served. */
export const subgraphContext =
  (verifier: CallerVerifier, secret: string) =>
  async (req: FastifyRequest): Promise<RequestContext> => {
    const presented = req.headers[GATEWAY_SECRET_HEADER];
    if (typeof presented !== 'string' || !sameSecret(presented, secret)) {
      throw forbidden('subgraphs accept calls from the gateway only');
    }
    return requestContext({ ...(await callerOf(req, verifier)), traceId: req.traceId });
  };
