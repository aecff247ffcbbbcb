import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendUcpError, ucpError } from './errors.ts';

/**
 * UCP's REST endpoints MUST be served with TLS 1.3 at least (checkout-rest.md, order-rest.md).
 * Served TLS refuses older handshakes by default (TLS_MIN_VERSION); where an operator lowered it
 * for other callers, a UCP request on an older connection is refused here, before any step.
 * Plain HTTP (behind a proxy that terminates TLS) is the proxy's to judge.
 */
export async function tls13(req: FastifyRequest, reply: FastifyReply) {
  const socket = req.raw.socket as Partial<TLSSocket>;
  if (!socket.encrypted || typeof socket.getProtocol !== 'function') return;
  const version = socket.getProtocol();
  if (version === 'TLSv1.3') return;
  if (req.agent) req.agent.reason = `ucp: ${version ?? 'unknown TLS'} below TLS 1.3`;
  return sendUcpError(
    reply,
    ucpError(403, 'tls_version_unsupported', 'UCP endpoints are served over TLS 1.3 or later.'),
  );
}
