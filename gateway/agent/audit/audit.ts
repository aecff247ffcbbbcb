import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { cutText, wellFormed } from '../../../lib/json/well-formed.ts';
import { ORDER_ID } from '../order/place.ts';
import type { AuditLog } from './log.ts';

/**
 * The order a call concerns: the one its Location names (a created order, or its replay under
 * the same Idempotency-Key), or the one its path names when that read (or change) succeeded.
 * Read from the reply, so every route of the chain is covered without each setting it.
 */
function orderIdOf(req: FastifyRequest, reply: FastifyReply): string | null {
  if (req.agent?.orderId) return req.agent.orderId;
  const location = reply.getHeader('location');
  const fromLocation = typeof location === 'string' ? location.slice(location.lastIndexOf('/') + 1) : '';
  if (ORDER_ID.test(fromLocation)) return fromLocation;
  const id = (req.params as { id?: unknown } | undefined)?.id;
  return reply.statusCode < 300 && typeof id === 'string' && ORDER_ID.test(id) ? id : null;
}

/**
 * Step 9 (onResponse, after the reply is sent): every agent call, refused ones included, gets
 * an entry: trace id, status, duration in ms, identity and how it was proven, reason.
 */
export function auditStep(log: AuditLog, clock: Clock) {
  return async function audit(req: FastifyRequest, reply: FastifyReply) {
    const a = req.agent;
    // A rehearsal bought nothing: the warm-up's one entry says it ran (gateway/agent/rehearsal.ts).
    if (a?.rehearsal) return;
    log.append({
      at: clock.now(),
      traceId: req.traceId,
      method: req.method,
      path: req.routeOptions.url ?? req.url.slice(0, 256),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      identity: a?.identity?.id ?? null,
      // Cut without splitting a pair, and well-formed: the entry is hashed as the store keeps it.
      reason: wellFormed(cutText(a?.reason ?? 'ok', 1024)),
      identitySource: a?.identity ? (a.identitySource ?? null) : null,
      orderId: orderIdOf(req, reply),
    });
  };
}
