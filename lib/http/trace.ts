import type { FastifyRequest } from 'fastify';

export const UNKNOWN_TRACE = 'unknown-trace';
const TRACE_ID = /^[\x21-\x7e]{1,128}$/;
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/**
 * The trace id of a request: `X-Trace-Id` (printable ASCII, bounded), else the trace-id of a
 * W3C `traceparent`, else `unknown-trace` as the spec says.
 */
export function traceIdOf(headers: FastifyRequest['headers']): string {
  const x = headers['x-trace-id'];
  if (typeof x === 'string' && TRACE_ID.test(x)) return x;
  const tp = headers.traceparent;
  const m = typeof tp === 'string' ? TRACEPARENT.exec(tp) : null;
  return m?.[1] ?? UNKNOWN_TRACE;
}
