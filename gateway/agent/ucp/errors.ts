import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * UCP's protocol errors (checkout-rest.md "Error Responses", overview.md "Error Codes"): the HTTP
 * status is the signal, the body `{code, content}` (with `path` when one part of the request is
 * at fault, and `continue_url` for discovery and version failures). Business outcomes are not
 * errors: they are HTTP 200 with `messages[]` (render.ts).
 */
export interface UcpErrorBody {
  code: string;
  content: string;
  path?: string;
  continue_url?: string;
  /** identity-linking.md's errors also carry the code as a message (its examples' body). */
  messages?: readonly Record<string, string>[];
}

export class UcpError extends Error {
  constructor(
    readonly status: number,
    readonly body: UcpErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.content);
    this.name = 'UcpError';
  }
}

export const ucpError = (
  status: number,
  code: string,
  content: string,
  extra: {
    path?: string;
    continue_url?: string;
    headers?: Record<string, string>;
    messages?: readonly Record<string, string>[];
  } = {},
): UcpError =>
  new UcpError(
    status,
    {
      code,
      content,
      ...(extra.path ? { path: extra.path } : {}),
      ...(extra.continue_url ? { continue_url: extra.continue_url } : {}),
      ...(extra.messages ? { messages: extra.messages } : {}),
    },
    extra.headers,
  );

export function sendUcpError(reply: FastifyReply, e: UcpError): FastifyReply {
  return reply.code(e.status).headers(e.headers).type('application/json').send(JSON.stringify(e.body));
}

const pointerPath = (pointer: string | undefined): string | undefined => {
  if (!pointer) return undefined;
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  return `$${tokens.map((t) => (/^(0|[1-9]\d*)$/.test(t) ? `[${t}]` : `.${t}`)).join('')}`;
};

/** An RFC 9457 problem of a shared agent step as UCP's error: its type's slug is the code. */
export function ucpErrorOfProblem(
  p: { type?: string; status?: number; detail?: string; title?: string; errors?: { pointer?: string }[] },
  status = p.status ?? 500,
): UcpError {
  const type = p.type ?? '';
  const slug = (type.slice(type.lastIndexOf('/') + 1) || 'error').replace(/-/g, '_');
  const path = pointerPath(p.errors?.[0]?.pointer);
  return ucpError(status, slug, p.detail ?? p.title ?? 'The request was refused.', path ? { path } : {});
}

/**
 * onSend: the shared steps (scope, block, rate limit, media type, size, parse) answer problem+json;
 * on the UCP routes each leaves as UCP's error body, status and headers (Retry-After,
 * WWW-Authenticate) as the step set them.
 */
export async function problemAsUcpError(_req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !type.startsWith('application/problem+json') || typeof payload !== 'string')
    return payload;
  const p = JSON.parse(payload) as Parameters<typeof ucpErrorOfProblem>[0] & { signature_error?: string };
  reply.type('application/json');
  // The strict JSON parser finds a body its signed Content-Digest does not match (the shared
  // step answers 401 for /v2); signatures.md's registry makes that 400 `digest_mismatch`.
  if (p.signature_error === 'content-digest-mismatch') {
    reply.code(400);
    return JSON.stringify(
      ucpError(400, 'digest_mismatch', 'The body does not match the signed Content-Digest.').body,
    );
  }
  return JSON.stringify(ucpErrorOfProblem(p, reply.statusCode).body);
}
