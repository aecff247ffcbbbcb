import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { jcsText } from '../../../lib/ap2/canonical.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { parseIdempotencyKey, recordKey } from '../idempotency/key.ts';
import type { IdempotencyStore, StoredReply } from '../idempotency/store.ts';
import { acpError, sendAcpError } from './errors.ts';

/**
 * ACP's idempotency (RFC agentic_checkout §6), on the order route's own store
 * (gateway/agent/idempotency/): required on every POST (400), keyed by the caller's identity
 * and the request path, compared by the body's canonical JSON (key order and `1.0`/`1` do not
 * matter; `null` and absent do, and so does array order), replayed with the first status and
 * body and `Idempotent-Replayed: true`, 422 for another body, 409 with Retry-After while the
 * first is in flight. 5xx answers are not kept (the key is free again), nor transient refusals
 * that carry Retry-After (a 409 while the session's completion runs, a 429); every other answer
 * is, for IDEMPOTENCY_TTL_SECONDS (24 h by default, the RFC's minimum).
 */

declare module 'fastify' {
  interface FastifyRequest {
    acpIdempotency?: {
      key: string;
      fingerprint: string;
      replayed: boolean;
      /**
       * The handler's outcome is found again by the domain without the stored reply (a create
       * whose session id comes from this record: sessionIdOfRecord; a completion whose session
       * keeps this record: recordDigest), so the response need not wait for the reply to be
       * written.
       */
      recoverable?: boolean;
    };
  }
}

/**
 * The body as canonical JSON text: object keys sorted at every level (RFC 8785's ordering), i.e.
 * lib/ap2/canonical.ts's JCS (safe-stable-stringify). For a parsed JSON body that is the text the
 * hand-written recursion written here before gave (keys sorted by code unit, values as
 * JSON.stringify writes them), so fingerprints kept in the store, and the session ids derived
 * from them (sessionIdOfRecord), stay the same (test/acp/fingerprint.test.ts); it
 * allocates about half as much (issue 50: 6.7 against 14.2 kB for a completion with a 3.5 kB
 * mandate, 20 against 46 kB for a checkout-sized body; in process, young generation 256 MB).
 */
export const canonicalJson = (value: unknown): string => jcsText(value ?? null);

export const bodyFingerprint = (body: unknown): string =>
  createHash('sha256')
    .update(canonicalJson(body ?? null))
    .digest('base64url');

/**
 * A create's session id from its idempotency record (the caller, the path, the key) and its
 * body: the same request again, after a crash lost its stored reply, inserts the same id and
 * meets the session it made; another body under the key (once the record expired) is another
 * session. The same shape as a random id (`cs_` and 32 hex digits).
 */
export const sessionIdOfRecord = (held: { key: string; fingerprint: string }): string =>
  `cs_${recordDigest(held).slice(0, 32)}`;

/**
 * The idempotency record as one value (the caller, the path, the key and the body's
 * fingerprint): a completion keeps it in its session (CheckoutSession.completedBy), so the same
 * request after a crash lost its stored reply is known again.
 */
export const recordDigest = (held: { key: string; fingerprint: string }): string =>
  createHash('sha256').update(held.key).update('\0').update(held.fingerprint).digest('hex');

const pathOf = (req: FastifyRequest) => (req.raw.url ?? req.url).split('?')[0] as string;

/**
 * The first reply again, as both checkout protocols replay it: its status, body and Location,
 * marked `Idempotent-Replayed: true`; the record step then keeps nothing new.
 */
export function replayReply(
  req: FastifyRequest,
  reply: FastifyReply,
  record: { key: string; fingerprint: string },
  first: StoredReply,
) {
  req.agent.reason = 'idempotency: replayed';
  req.acpIdempotency = { ...record, replayed: true };
  if (first.location) reply.header('location', first.location);
  return reply
    .code(first.status)
    .header('idempotent-replayed', 'true')
    .type('application/json')
    .send(first.body);
}

export function acpIdempotencyStep(o: { store: IdempotencyStore; clock: Clock }) {
  return async function idempotency(req: FastifyRequest, reply: FastifyReply) {
    const identity = req.agent.identity;
    if (!identity) return;
    const header = req.headers['idempotency-key'];
    if (header === undefined) {
      req.agent.reason = 'idempotency: Idempotency-Key missing';
      return sendAcpError(
        reply,
        acpError(400, 'idempotency_key_required', 'Idempotency-Key header is required on all POST requests'),
      );
    }
    const key = parseIdempotencyKey(header);
    if (!key) {
      req.agent.reason = 'idempotency: unusable Idempotency-Key';
      return sendAcpError(
        reply,
        acpError(
          400,
          'invalid_idempotency_key',
          'Idempotency-Key must be one value of 1 to 255 visible ASCII characters',
        ),
      );
    }
    reply.header('idempotency-key', key);
    const k = recordKey(identity.id, `acp ${pathOf(req)}\0${key}`);
    const fingerprint = bodyFingerprint(req.body);
    const r = await o.store.begin(k, fingerprint, o.clock.now());
    switch (r.kind) {
      case 'started':
        req.acpIdempotency = { key: k, fingerprint, replayed: false };
        return;
      case 'replay':
        return replayReply(req, reply, { key: k, fingerprint }, r.reply);
      case 'mismatch':
        req.agent.reason = 'idempotency: key reused with another body';
        return sendAcpError(
          reply,
          acpError(
            422,
            'idempotency_conflict',
            'Idempotency-Key has already been used with a different request body',
          ),
        );
      case 'in-flight':
        req.agent.reason = 'idempotency: key in flight';
        return sendAcpError(
          reply,
          acpError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is currently being processed',
            undefined,
            {
              'retry-after': '1',
            },
          ),
        );
    }
  };
}

/**
 * onSend, after the reply is final: keep it for replay, or free the key after a 5xx (§6.5). A
 * failure to keep it must not turn a done operation into an error: it is logged.
 */
export function acpIdempotencyRecord(o: { store: IdempotencyStore; clock: Clock; log: Logger }) {
  return async function record(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const held = req.acpIdempotency;
    if (!held || held.replayed) return payload;
    req.acpIdempotency = undefined;
    // 5xx are not kept (§6.5), nor answers that say to retry (Retry-After: a session busy with
    // its completion): the retry with the same key must be run, not answered with the refusal.
    // Nor a rehearsal's (the warm-up's, issue 48): it leaves nothing behind.
    if (
      reply.statusCode >= 500 ||
      reply.hasHeader('retry-after') ||
      typeof payload !== 'string' ||
      req.agent?.rehearsal
    ) {
      await o.store.release(held.key).catch(() => {});
      return payload;
    }
    const location = reply.getHeader('location');
    const stored = o.store
      .complete(
        held.key,
        held.fingerprint,
        { status: reply.statusCode, body: payload, ...(typeof location === 'string' ? { location } : {}) },
        o.clock.now(),
      )
      .catch((err) => o.log.error({ err, traceId: req.traceId }, 'ACP idempotency record not stored'));
    // A recoverable outcome answers at once; its reply is stored a round trip later. A retry
    // meanwhile is replayed from memory by the embedded store (sql.ts, `finishing`); with Redis
    // the write is sent before this answer leaves.
    if (!held.recoverable) await stored;
    return payload;
  };
}
