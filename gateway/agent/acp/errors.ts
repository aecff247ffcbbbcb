import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatJsonPath, pointerTokens } from '../../../lib/json/json-path.ts';

/** A problem's JSON pointer as JSONPath (all-digit tokens are array indexes in these bodies). */
const pointerToJsonPath = (pointer: string): string =>
  formatJsonPath(pointerTokens(pointer).map((t) => (/^(0|[1-9]\d*)$/.test(t) ? Number(t) : t)));

/**
 * ACP's protocol-level error (RFC agentic_checkout §3.1, `Error` in the bundle): a flat
 * `{type, code, message, param}` with an RFC 9535 JSONPath `param`. Business problems of a
 * valid session are its `messages[]` instead (render.ts); this is for requests that yield no
 * session at all.
 */
export type AcpErrorType = 'invalid_request' | 'processing_error' | 'service_unavailable';

export interface AcpErrorBody {
  type: AcpErrorType;
  code: string;
  message: string;
  param?: string;
  supported_versions?: string[];
}

export class AcpError extends Error {
  constructor(
    readonly status: number,
    readonly body: AcpErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
    this.name = 'AcpError';
  }
}

export const acpError = (
  status: number,
  code: string,
  message: string,
  param?: string,
  headers: Record<string, string> = {},
): AcpError =>
  new AcpError(
    status,
    {
      type: status >= 500 ? (status === 503 ? 'service_unavailable' : 'processing_error') : 'invalid_request',
      code,
      message,
      ...(param ? { param } : {}),
    },
    headers,
  );

export function sendAcpError(reply: FastifyReply, e: AcpError): FastifyReply {
  return reply.code(e.status).headers(e.headers).type('application/json').send(e.body);
}

/**
 * The shared agent steps (identity, scope, block, rate limit, media type, size) answer RFC 9457
 * problems; on the ACP routes each leaves as ACP's flat error instead (onSend, before the bytes
 * go out): the problem's type slug is the code (`rate-limited` → `rate_limited`), its detail
 * the message, its first violation's JSON pointer the param. Status and headers (Retry-After,
 * WWW-Authenticate) stay as the step set them.
 */
export async function problemAsAcpError(_req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !type.startsWith('application/problem+json') || typeof payload !== 'string')
    return payload;
  const p = JSON.parse(payload) as Parameters<typeof acpErrorOfProblem>[0];
  reply.type('application/json');
  return JSON.stringify(acpErrorOfProblem(p, reply.statusCode).body);
}

/** A problem (RFC 9457) as ACP's error: its type's slug the code, its detail the message. */
export function acpErrorOfProblem(
  p: { type?: string; status?: number; detail?: string; errors?: { pointer?: string }[] },
  status = p.status ?? 500,
): AcpError {
  const type = p.type ?? '';
  const slug = type.slice(type.lastIndexOf('/') + 1) || 'error';
  const pointer = p.errors?.[0]?.pointer;
  return acpError(
    p.status ?? status,
    slug.replace(/-/g, '_'),
    p.detail ?? 'The request was refused.',
    pointer !== undefined ? pointerToJsonPath(pointer) : undefined,
  );
}
