import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UNKNOWN_TRACE } from '../../../../lib/http/trace.ts';
import type { Logger } from '../../../../lib/logger.ts';
import type { RouteReply, UcpHttpCall } from './call.ts';

/** UCP's error for a tool call that could not run (as the routes answer their own faults). */
const UNAVAILABLE = JSON.stringify({
  code: 'service_unavailable',
  content: 'The business cannot answer this now; retry shortly.',
});

const FORWARDED = ['authorization', 'traceparent', 'tracestate'] as const;

/**
 * Runs one UCP call through its REST route in process (`app.inject`), with the /mcp request's own
 * Authorization and trace context. The route's identity step verifies the key again, so it
 * trusts nothing /mcp says; the UCP-Agent it gets is the tool call's meta["ucp-agent"].
 */
export async function runUcpCall(
  app: FastifyInstance,
  log: Logger,
  req: FastifyRequest,
  basePath: string,
  call: UcpHttpCall,
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
    log.error({ err, traceId: req.traceId }, 'mcp UCP tool call could not run');
    return { status: 503, headers: {}, body: UNAVAILABLE };
  }
}
