import type { FastifyReply, FastifyRequest } from 'fastify';
import { freshState } from '../state.ts';
import { AcpError, sendAcpError } from './errors.ts';
import { ACP_VERSION } from './schema/index.ts';

export { ACP_VERSION };
/** Newest first, as the Error schema's `supported_versions` asks. */
export const SUPPORTED_VERSIONS: readonly string[] = [ACP_VERSION];

/**
 * `API-Version` is required on every call (RFC agentic_checkout §2.1): missing or unsupported
 * is 400 with `supported_versions`, and the well-known codes the RFC names.
 */
export async function apiVersionStep(req: FastifyRequest, reply: FastifyReply) {
  // First of the chain: the audit entry of a refusal here needs the request's state too.
  req.agent = freshState();
  const v = req.headers['api-version'];
  if (typeof v === 'string' && SUPPORTED_VERSIONS.includes(v)) return;
  req.agent.reason = v === undefined ? 'acp: API-Version missing' : 'acp: API-Version not supported';
  const missing = v === undefined;
  return sendAcpError(
    reply,
    new AcpError(400, {
      type: 'invalid_request',
      code: missing ? 'missing_api_version' : 'unsupported_api_version',
      message: missing
        ? 'The API-Version header is required.'
        : `API-Version ${String(v).slice(0, 32)} is not supported; use one of ${SUPPORTED_VERSIONS.join(', ')}.`,
      supported_versions: [...SUPPORTED_VERSIONS],
    }),
  );
}

/** `Request-Id` is echoed when sent (a single, printable, bounded value). */
export async function echoRequestId(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const id = req.headers['request-id'];
  if (typeof id === 'string' && /^[\x21-\x7e]{1,255}$/.test(id)) reply.header('request-id', id);
  return payload;
}
