import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { badIdempotencyKey, idempotencyInFlight, idempotencyKeyReused } from '../problems.ts';
import { fingerprint, parseIdempotencyKey, recordKey } from './key.ts';
import type { IdempotencyStore } from './store.ts';

export interface IdempotencyOptions {
  readonly store: IdempotencyStore;
  readonly clock: Clock;
}

/**
 * Step 7 (preHandler), draft-ietf-httpapi-idempotency-key-header: same key and body replays
 * the stored reply (Idempotent-Replayed: true), same key and another body 422, still in
 * flight 409. Without the header the request simply goes on.
 */
export function idempotencyStep(o: IdempotencyOptions) {
  return async function idempotency(req: FastifyRequest, reply: FastifyReply) {
    const header = req.headers['idempotency-key'];
    if (header === undefined) return;
    const { identity, order } = req.agent;
    if (!identity || !order) return;
    const key = parseIdempotencyKey(header);
    if (!key) {
      req.agent.reason = 'idempotency: unusable Idempotency-Key';
      return sendProblem(reply, badIdempotencyKey(), req.url);
    }
    const k = recordKey(identity.id, key);
    const fp = fingerprint(order);
    const r = await o.store.begin(k, fp, o.clock.now());
    switch (r.kind) {
      case 'started':
        req.agent.idempotency = { key: k, fingerprint: fp };
        return;
      case 'replay':
        req.agent.reason = 'idempotency: replayed';
        if (r.reply.location) reply.header('location', r.reply.location);
        return reply
          .code(r.reply.status)
          .header('idempotent-replayed', 'true')
          .type('application/json')
          .send(r.reply.body);
      case 'mismatch':
        req.agent.reason = 'idempotency: key reused with another body';
        return sendProblem(reply, idempotencyKeyReused(), req.url);
      case 'in-flight':
        req.agent.reason = 'idempotency: key in flight';
        return sendProblem(reply, idempotencyInFlight(), req.url);
    }
  };
}
