import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { AuditLog } from './log.ts';

/**
 * Step 9 (onResponse, after the reply is sent): every agent call, refused ones included, gets
 * an entry: trace id, status, duration in ms, identity and how it was proven, reason.
 */
export function auditStep(log: AuditLog, clock: Clock) {
  return async function audit(req: FastifyRequest, reply: FastifyReply) {
    const a = req.agent;
    log.append({
      at: clock.now(),
      traceId: req.traceId,
      method: req.method,
      path: req.routeOptions.url ?? req.url.slice(0, 256),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      identity: a?.identity?.id ?? null,
      reason: (a?.reason ?? 'ok').slice(0, 1024),
      identitySource: a?.identity ? (a.identitySource ?? null) : null,
    });
  };
}
