import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { bodyFingerprint, replayReply } from '../acp/idempotency.ts';
import { parseIdempotencyKey, recordKey } from '../idempotency/key.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import { sendUcpError, ucpError } from './errors.ts';

/**
 * UCP's Idempotency-Key (checkout-rest.md, "Specific Header Requirements"), on the same store
 * as the order route and ACP: the key is optional (SHOULD), and when sent the first answer is
 * kept 24 hours and returned for a repeat; the same key with another body is 409 Conflict
 * (ACP says 422 for this; UCP says 409). Keyed by the caller's identity and the request path,
 * bodies compared as canonical JSON (ACP's fingerprint). While the first is in flight: 409 with
 * Retry-After. The record half is ACP's (acpIdempotencyRecord reads `req.acpIdempotency`):
 * 5xx and answers carrying Retry-After free the key, everything else is kept.
 */
export function ucpIdempotencyStep(o: { store: IdempotencyStore; clock: Clock }) {
  return async function idempotency(req: FastifyRequest, reply: FastifyReply) {
    const identity = req.agent.identity;
    const header = req.headers['idempotency-key'];
    if (!identity || header === undefined) return;
    const key = parseIdempotencyKey(header);
    if (!key) {
      req.agent.reason = 'idempotency: unusable Idempotency-Key';
      return sendUcpError(
        reply,
        ucpError(
          400,
          'invalid_idempotency_key',
          'Idempotency-Key must be one value of 1 to 255 visible ASCII characters.',
        ),
      );
    }
    const path = (req.raw.url ?? req.url).split('?')[0] as string;
    const k = recordKey(identity.id, `ucp ${req.method} ${path}\0${key}`);
    const fingerprint = bodyFingerprint(req.body ?? {});
    const r = await o.store.begin(k, fingerprint, o.clock.now());
    switch (r.kind) {
      case 'started':
        req.acpIdempotency = { key: k, fingerprint, replayed: false };
        return;
      case 'replay':
        return replayReply(req, reply, { key: k, fingerprint }, r.reply);
      case 'mismatch':
        req.agent.reason = 'idempotency: key reused with another body';
        return sendUcpError(
          reply,
          ucpError(
            409,
            'idempotency_conflict',
            'Idempotency-Key has already been used with a different request body.',
          ),
        );
      case 'in-flight':
        req.agent.reason = 'idempotency: key in flight';
        return sendUcpError(
          reply,
          ucpError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is being processed; retry shortly.',
            {
              headers: { 'retry-after': '1' },
            },
          ),
        );
    }
  };
}
