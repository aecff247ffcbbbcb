import type { KeyObject } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { signHttpResponse } from '../../../lib/http-signature/sign.ts';
import type { Logger } from '../../../lib/logger.ts';

/**
 * Signed responses on the UCP REST binding (signatures.md at v2026-04-08, "REST Response
 * Signing", RECOMMENDED for completion and error responses): every answer of the endpoint,
 * success or error, checkout, order or catalog, carries `Content-Digest` (RFC 9530, sha-256 of
 * the exact bytes sent) and an RFC 9421 signature `sig1` over `@status`, `content-digest` and
 * `content-type` (only `@status` when there is no body), with `created` and `keyid`, by the
 * business's key (the UCP key ring of the profile's `signing_keys`, the one that signs order
 * webhooks and `ap2.merchant_authorization`). So a platform can prove what it was told, a
 * refusal included. No `alg` parameter: signatures.md derives it from the key's curve.
 *
 * Runs last in onSend, after the body is final (problems rewritten as UCP errors, idempotent
 * replays). A response that cannot be signed (the key ring unreadable) goes out unsigned and is
 * logged: signing must not turn an answer into a 5xx.
 */

export interface ResponseSigner {
  readonly clock: Clock;
  readonly log: Logger;
  signingKey(): Promise<{ readonly kid: string; readonly key: KeyObject }>;
}

/** The onSend step; `notFoundOnly`: the endpoint scope's copy, for paths no route takes. */
export function signUcpResponses(s: ResponseSigner, o: { notFoundOnly?: boolean } = {}) {
  return async function signResponse(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    if (o.notFoundOnly && !req.is404) return payload;
    if (payload !== null && payload !== undefined && typeof payload !== 'string' && !Buffer.isBuffer(payload))
      return payload; // a stream: nothing of the UCP endpoint answers one
    await signReply(s, req, reply, (payload ?? '') as string | Buffer);
    return payload;
  };
}

/**
 * Sets the signature headers of `reply` for `body`, the bytes about to be sent with its status and
 * Content-Type. Besides onSend, for answers no hook of the endpoint sees: the router's refusals
 * of paths it cannot read (./routes.ts), which Fastify answers in the server's root context.
 */
export async function signReply(
  s: ResponseSigner,
  req: FastifyRequest,
  reply: FastifyReply,
  body: string | Buffer,
): Promise<void> {
  const type = reply.getHeader('content-type');
  const hasBody = body.length > 0;
  const components = [
    '@status',
    ...(hasBody ? ['content-digest'] : []),
    ...(hasBody && type ? ['content-type'] : []),
  ];
  try {
    const { kid, key } = await s.signingKey();
    const headers = await signHttpResponse({
      status: reply.statusCode,
      headers: hasBody && type ? { 'content-type': String(type) } : {},
      ...(hasBody ? { body } : {}),
      privateKey: key,
      keyid: kid,
      components,
      params: ['created', 'keyid'],
      paramValues: { created: new Date(s.clock.now()) },
    });
    reply.headers(headers);
  } catch (err) {
    s.log.warn({ err, traceId: req.traceId }, 'UCP response sent unsigned');
  }
}
