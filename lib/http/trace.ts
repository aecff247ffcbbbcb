import type { FastifyRequest } from 'fastify';

export const UNKNOWN_TRACE = 'unknown-trace';
const TRACE_ID = /^[\x21-\x7e]{1,128}$/;
// W3C Trace Context §3.2: version-traceid-parentid-flags in lowercase hex. Version 00 has exactly
// these four fields; a later version may append more after a dash, which a 00 parser ignores.
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}(-.*)?$/;
const ALL_ZERO = /^0+$/;

/**
 * The trace id of a W3C `traceparent`, or `undefined` when the header is not a valid one:
 * version `ff`, an all-zero trace or parent id, or fields after version 00's four make it
 * invalid, and an invalid traceparent is ignored, never an error. Hand-written (four checks)
 * rather than loading @opentelemetry/core, which tracing off must not import.
 */
export function w3cTraceIdOf(traceparent: unknown): string | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ALL_ZERO.test(traceId ?? '') || ALL_ZERO.test(parentId ?? '')) return undefined;
  return traceId;
}

/**
 * The trace id of a request, as the spec says: `X-Trace-Id` (printable ASCII, bounded), else the
 * trace id of a valid W3C `traceparent`, else `unknown-trace`. A caller that names its own
 * X-Trace-Id gets it back and finds it in the audit; with tracing on, the request's span carries
 * it too (`app.x_trace_id`), so either id finds the trace.
 */
export function traceIdOf(headers: FastifyRequest['headers']): string {
  const x = headers['x-trace-id'];
  if (typeof x === 'string' && TRACE_ID.test(x)) return x;
  return w3cTraceIdOf(headers.traceparent) ?? UNKNOWN_TRACE;
}
