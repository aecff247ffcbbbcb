import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import type { Clock } from '../../lib/clock.ts';
import { sendProblem } from '../../lib/problem.ts';
import type { AgentActivity } from '../agent/activity/activity.ts';
import { isBlocked } from '../agent/block/policy.ts';
import type { AgentGatewayState } from '../agent/index.ts';
import { operatorContract, violations } from './contract.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { badQuery, invalidBody } from './problems.ts';

export const AGENTS_PATH = '/api/v2/operator/agents';
export const UNBLOCK_PATH = '/api/v2/operator/agents/unblock';
export const DEFAULT_LIMIT = 50;
/** The only block there is today (spec, "Errors": repeated-failure protection). */
export const BLOCK_REASON = 'more than 5 consecutive contract-validation errors';

const iso = (ms: number) => new Date(ms).toISOString();

export interface AgentRoutesDeps {
  readonly state: AgentGatewayState;
  readonly clock: Clock;
}

/** GET /api/v2/operator/agents: one page of identities with their bucket and block now. */
export function listAgentsHandler(d: AgentRoutesDeps) {
  return async function listAgents(req: FastifyRequest, reply: FastifyReply) {
    const contract = operatorContract();
    const q = { ...(req.query as Record<string, unknown>) };
    if (!contract.listAgentsQuery(q))
      return sendProblem(reply, badQuery(violations(contract.listAgentsQuery.errors)), AGENTS_PATH);
    let after: { lastSeen: number; identity: string } | undefined;
    if (q.cursor !== undefined) {
      const v = decodeCursor(q.cursor as string);
      if (v?.length !== 2 || !Number.isSafeInteger(v[0]) || typeof v[1] !== 'string')
        return sendProblem(
          reply,
          badQuery([{ pointer: '/cursor', message: 'is not a cursor this API gave' }]),
          AGENTS_PATH,
        );
      after = { lastSeen: v[0] as number, identity: v[1] as string };
    }
    const now = d.clock.now();
    const page = await d.state.activity.page(now, (q.limit as number | undefined) ?? DEFAULT_LIMIT, after);
    const agents = await Promise.all(page.items.map((a) => describeAgent(d, a, now)));
    return reply.header('cache-control', 'no-store').send({
      agents,
      total: page.total,
      next_cursor: page.next ? encodeCursor([page.next.lastSeen, page.next.identity]) : null,
    });
  };
}

async function describeAgent(d: AgentRoutesDeps, a: AgentActivity, now: number) {
  const { blocks, buckets, bucketPolicy, blockPolicy } = d.state;
  const [block, tokens] = await Promise.all([blocks.get(a.identity, now), buckets.peek(a.identity, now)]);
  const blocked = isBlocked(block, now);
  return {
    spiffe_id: a.identity,
    first_seen: iso(a.firstSeen),
    last_seen: iso(a.lastSeen),
    calls_last_minute: a.callsLastMinute,
    rate_limit: {
      // Three decimals are plenty for a gauge, and keep the JSON short.
      tokens: Math.floor(tokens * 1000) / 1000,
      capacity: bucketPolicy.capacity,
      refill_per_second: bucketPolicy.refillPerSecond,
    },
    block: {
      blocked,
      reason: blocked ? BLOCK_REASON : null,
      blocked_until: blocked ? iso(block.until) : null,
      seconds_left: blocked ? Math.ceil((block.until - now) / 1000) : 0,
      consecutive_errors: block.count,
      max_consecutive_errors: blockPolicy.maxConsecutiveErrors,
    },
  };
}

/**
 * POST /api/v2/operator/agents/unblock: the block and the consecutive count go, on every replica
 * (the store is shared). Audited in the agent audit log, naming the identity and the operator.
 */
export function unblockHandler(d: AgentRoutesDeps) {
  return async function unblock(req: FastifyRequest, reply: FastifyReply) {
    const contract = operatorContract();
    if (!contract.unblockRequest(req.body))
      return sendProblem(reply, invalidBody(violations(contract.unblockRequest.errors)), UNBLOCK_PATH);
    const raw = (req.body as { spiffe_id: string }).spiffe_id;
    const parsed = parseSpiffeId(raw);
    if (!parsed.ok)
      return sendProblem(
        reply,
        invalidBody([{ pointer: '/spiffe_id', message: parsed.reason }]),
        UNBLOCK_PATH,
      );
    const identity = parsed.value.id;
    const operator = req.operator?.subject ?? 'unknown-operator';
    const before = await d.state.blocks.clear(identity);
    const now = d.clock.now();
    const wasBlocked = isBlocked(before, now);
    d.state.audit.append({
      at: now,
      traceId: req.traceId,
      method: 'POST',
      path: UNBLOCK_PATH,
      status: 200,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      identity,
      reason:
        `unblocked by operator ${operator}: ${wasBlocked ? 'was blocked' : 'was not blocked'}, ${before.count} consecutive errors cleared`.slice(
          0,
          1024,
        ),
    });
    req.log.info({ traceId: req.traceId, identity, operator, wasBlocked }, 'agent unblocked by operator');
    return reply.header('cache-control', 'no-store').send({
      spiffe_id: identity,
      was_blocked: wasBlocked,
      cleared_errors: before.count,
      unblocked_by: operator.slice(0, 256),
      unblocked_at: iso(now),
    });
  };
}
