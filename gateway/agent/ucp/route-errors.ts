import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import { CheckoutUnavailable } from '../checkout/service.ts';
import { parseErrorProblem } from '../parse/parse.ts';
import { sendUcpError, UcpError, ucpError, ucpErrorOfProblem } from './errors.ts';

/**
 * The UCP endpoint's answers when no handler answers: anything thrown (./routes.ts's error
 * handler) and a path or method no route takes, each as UCP's `{code, content}`.
 */

/** Anything thrown: the client's mistakes as 4xx, the dependencies' absence as 503, never a 500. */
export function ucpErrorHandler(
  err: unknown,
  req: FastifyRequest,
  reply: FastifyReply,
  d: { readonly bodyLimit: number; readonly log: Logger },
) {
  const parsed = parseErrorProblem(req, err as { code?: string; statusCode?: number }, d.bodyLimit);
  if (parsed) return sendUcpError(reply, ucpErrorOfProblem(parsed.body));
  if (err instanceof UcpError) return sendUcpError(reply, err);
  if (!(err instanceof CheckoutUnavailable)) d.log.error({ err, traceId: req.traceId }, 'UCP step failed');
  if (req.agent) req.agent.reason = `ucp: unavailable (${err instanceof Error ? err.message : 'unknown'})`;
  return sendUcpError(
    reply,
    ucpError(503, 'service_unavailable', 'The business cannot answer this now; retry shortly.', {
      headers: { 'retry-after': '1' },
    }),
  );
}

/** A route's URL (`/ucp/checkout-sessions/:id`) as a pattern for a raw request path. */
export const routePattern = (url: string): RegExp =>
  new RegExp(
    `^${url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}$`,
  );

/** No route under the endpoint: 405 with Allow when the path is a route's under another method, else 404. */
export function unmatched(
  req: FastifyRequest,
  reply: FastifyReply,
  routes: readonly { path: RegExp; method: string }[],
) {
  const path = req.url.split('?', 1)[0] ?? '';
  const allowed = [...new Set(routes.filter((r) => r.path.test(path)).map((r) => r.method))];
  if (allowed.length > 0)
    return sendUcpError(
      reply,
      ucpError(
        405,
        'method_not_allowed',
        `${req.method.slice(0, 16)} is not allowed here; use ${allowed.join(', ')}.`,
        {
          headers: { allow: allowed.join(', ') },
        },
      ),
    );
  return sendUcpError(reply, ucpError(404, 'not_found', 'No such resource under the UCP endpoint.'));
}
