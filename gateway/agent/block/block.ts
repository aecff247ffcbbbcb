import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { agentBlocked } from '../problems.ts';
import type { BlockStore } from './store.ts';

export interface BlockOptions {
  readonly store: BlockStore;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Step 3 (onRequest): a blocked identity gets 429 with Retry-After until the block ends. */
export function blockStep(o: BlockOptions) {
  return async function block(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    if (!id) return;
    const now = o.clock.now();
    const s = await o.store.get(id.id, now);
    req.agent.failures = s.count;
    if (s.until <= now) return;
    req.agent.reason = 'blocked: repeated contract errors';
    return sendProblem(reply, agentBlocked(Math.ceil((s.until - now) / 1000)), req.url);
  };
}

/**
 * Bookkeeping for step 3 (onSend, before the reply leaves, so the agent's next request already
 * sees it): a body refused by steps 5–6 counts one more consecutive error; a body that passed
 * the contract starts the count again.
 */
export function blockBookkeeping(o: BlockOptions) {
  return async function countContractErrors(req: FastifyRequest, _reply: FastifyReply, payload: unknown) {
    const a = req.agent;
    const id = a?.identity;
    if (!id) return payload;
    try {
      if (a.contractError) {
        const s = await o.store.recordError(id.id, o.clock.now());
        if (s.until > 0 && s.count === 0)
          o.log.warn({ traceId: req.traceId, identity: id.id }, 'agent blocked');
      } else if ((a.order || a.validBody) && a.failures > 0) {
        await o.store.reset(id.id);
      }
    } catch (err) {
      // The reply is decided; a store outage must not turn it into a 5xx. While the store is
      // down the block check itself (step 3) refuses every call with 503, so nothing slips by.
      o.log.error({ err, traceId: req.traceId }, 'block count not updated');
    }
    return payload;
  };
}
