import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UNKNOWN_TRACE } from '../../../../lib/http/trace.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { Problem, sendProblem } from '../../../../lib/problem.ts';
import { freshState } from '../../state.ts';
import { acpBindingOf } from './binding.ts';
import type { AcpHttpCall, RouteReply } from './call.ts';

/** What /mcp learned of a caller with a checkout API key. */
export interface AcpCaller {
  /** The key's scopes, narrowed by the scope policy (as the ACP scope step narrows them). */
  readonly scopes: ReadonlySet<string>;
  /** Where the ACP routes are mounted (`/acp`). */
  readonly basePath: string;
  /** The UCP platform profile the key is bound to (acp-keys.md, "UCP profile"); null: unbound. */
  readonly ucpProfile: string | null;
}

/** A checkout API key /mcp does not accept: 401, before any MCP message is read. */
const invalidApiKey = (reason: string) =>
  new Problem(
    401,
    'invalid-checkout-api-key',
    'Unauthorized',
    `The checkout API key is not accepted: ${reason}.`,
    {},
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );

/**
 * Steps 1 and 2 of /mcp for `Authorization: Bearer acp_…`: the key, verified by the ACP routes'
 * own verifier, is the identity (the key's agent identity, proven by `api-key`); its scopes are
 * the key's, narrowed by the policy, as the ACP identity and scope steps decide. 401 otherwise.
 */
export function acpKeyStep(
  app: FastifyInstance,
  log: Logger,
  found: (req: FastifyRequest, caller: AcpCaller) => void,
) {
  return async function acpKey(req: FastifyRequest, reply: FastifyReply) {
    req.agent = freshState();
    const binding = acpBindingOf(app);
    if (!binding) {
      req.agent.reason = 'identity: checkout API keys are not accepted by this gateway';
      return sendProblem(reply, invalidApiKey('this gateway serves no ACP checkout'), req.url);
    }
    const v = await binding.keys.verify(req.headers.authorization);
    if (!v.ok) {
      req.agent.reason = `identity: ${v.reason}`;
      log.warn(
        { traceId: req.traceId, reason: v.reason },
        'MCP caller with a checkout API key not authenticated',
      );
      return sendProblem(reply, invalidApiKey(v.reason), req.url);
    }
    req.agent.identity = v.id;
    req.agent.identitySource = 'api-key';
    const granted = binding.policy.grants(v.id);
    found(req, {
      scopes: new Set(v.key.scopes.filter((s) => granted.has(s))),
      basePath: binding.basePath,
      ucpProfile: v.key.ucpProfile,
    });
  };
}

/** ACP's Error for a tool call that could not run (as the ACP routes answer their own faults). */
const UNAVAILABLE = JSON.stringify({
  type: 'service_unavailable',
  code: 'service_unavailable',
  message: 'The merchant cannot answer this now; retry shortly.',
});

const FORWARDED = ['authorization', 'traceparent', 'tracestate'] as const;

/**
 * Runs one ACP call through its REST route in process (`app.inject`), with the /mcp request's
 * own Authorization, trace context and trace id. No in-process marker is needed: the route's
 * identity step verifies the key again (the shared verifier's cache makes that a lookup in
 * memory), so it trusts nothing /mcp says.
 */
export const runAcpCall = (
  app: FastifyInstance,
  log: Logger,
  req: FastifyRequest,
  basePath: string,
  call: AcpHttpCall,
): Promise<RouteReply> => runRouteCall(app, log, req, basePath, call, UNAVAILABLE);

/**
 * One REST call of a protocol binding run in process (the ACP and UCP tools): the call's own
 * headers, the /mcp request's Authorization and trace context, the base path prepended. A throw
 * (the server closing, a fault) is answered `unavailable` with 503, as the routes answer their own
 * faults; every refusal is the route's.
 */
export async function runRouteCall(
  app: FastifyInstance,
  log: Logger,
  req: FastifyRequest,
  basePath: string,
  call: {
    readonly method: 'GET' | 'POST' | 'PUT';
    readonly path: string;
    readonly headers: Record<string, string>;
    readonly payload?: string;
  },
  unavailable: string,
): Promise<RouteReply> {
  const headers: Record<string, string> = { 'user-agent': 'agent-commerce-mcp', ...call.headers };
  for (const h of FORWARDED) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  if (req.traceId !== UNKNOWN_TRACE) headers['x-trace-id'] = req.traceId;
  if (call.payload !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await app.inject({
      method: call.method,
      url: `${basePath}${call.path}`,
      headers,
      ...(call.payload !== undefined ? { payload: call.payload } : {}),
    });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  } catch (err) {
    log.error({ err, traceId: req.traceId, path: call.path }, 'mcp tool call could not run its route');
    return { status: 503, headers: {}, body: unavailable };
  }
}
