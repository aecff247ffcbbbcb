import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { rateLimited } from '../problems.ts';
import type { BucketPolicy } from './bucket.ts';
import type { BucketStore } from './store.ts';

export interface RateLimitOptions {
  readonly store: BucketStore;
  readonly policy: BucketPolicy;
  readonly clock: Clock;
  /**
   * Whose bucket a request takes from; by default its verified identity's, and a request without
   * one takes none (the identity step refused it). Public routes name one for anonymous callers.
   */
  readonly keyOf?: (req: FastifyRequest) => string | undefined;
}

/**
 * Step 4 (onRequest): one token per request from the identity's bucket. Headers follow
 * draft-ietf-httpapi-ratelimit-headers (structured fields): RateLimit-Policy names the policy
 * with its quota q and window w (seconds to refill a whole bucket); RateLimit gives the
 * remaining r and the seconds t until the bucket is full again.
 */
export function rateLimitStep(o: RateLimitOptions) {
  const window = Math.ceil(o.policy.capacity / o.policy.refillPerSecond);
  const policyHeader = `"agent";q=${o.policy.capacity};w=${window}`;
  return async function rateLimit(req: FastifyRequest, reply: FastifyReply) {
    const key = o.keyOf ? o.keyOf(req) : req.agent.identity?.id;
    if (!key) return;
    const r = await o.store.take(key, o.clock.now());
    reply.header('ratelimit-policy', policyHeader);
    reply.header('ratelimit', `"agent";r=${r.remaining};t=${Math.ceil(r.resetMs / 1000)}`);
    // The warm-up's rehearsals take tokens as any call does but are never refused: their bucket
    // is the reserved identity's, and a refusal would leave the rest of the path cold.
    if (r.allowed || req.agent.rehearsal) return;
    req.agent.reason = 'rate limit: bucket empty';
    return sendProblem(reply, rateLimited(Math.max(1, Math.ceil(r.retryAfterMs / 1000))), req.url);
  };
}
