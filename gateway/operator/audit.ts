import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import type { Clock } from '../../lib/clock.ts';
import { sendProblem } from '../../lib/problem.ts';
import type { ChainedEntry } from '../agent/audit/entry.ts';
import type { AuditQuery } from '../agent/audit/log.ts';
import type { AuditReport } from '../agent/audit/verify.ts';
import type { AgentGatewayState } from '../agent/index.ts';
import { operatorContract, type Violation, violations } from './contract.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { badQuery, beyondTree, proofsUnavailable } from './problems.ts';

export const AUDIT_PATH = '/api/v2/operator/audit';
export const VERIFY_PATH = '/api/v2/operator/audit/verify';
export const CONSISTENCY_PATH = '/api/v2/operator/audit/consistency';
const DEFAULT_LIMIT = 50;
// RFC 3339 with an explicit offset (Ajv's date-time format allows no offset and leap seconds).
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

const iso = (ms: number) => new Date(ms).toISOString();

export interface AuditRoutesDeps {
  readonly state: AgentGatewayState;
  readonly clock: Clock;
}

const entryJson = (e: ChainedEntry) => ({
  seq: e.seq,
  at: iso(e.at),
  trace_id: e.traceId,
  method: e.method,
  path: e.path,
  status: e.status,
  duration_ms: e.durationMs,
  spiffe_id: e.identity,
  reason: e.reason,
  order_id: e.orderId ?? null,
  key_id: e.keyId,
  prev_hash: e.prevHash,
  hash: e.hash,
});

/** The query string as an AuditQuery, or the violations (each a 400). */
function auditQuery(q: Record<string, unknown>): AuditQuery | Violation[] {
  const errors: Violation[] = [];
  const instant = (name: 'since' | 'until') => {
    const v = q[name];
    if (v === undefined) return undefined;
    const ms = DATE_TIME.test(String(v)) ? Date.parse(String(v)) : Number.NaN;
    if (Number.isNaN(ms))
      errors.push({
        pointer: `/${name}`,
        message: 'must be an RFC 3339 date-time with an offset, e.g. 2026-11-23T12:00:00Z',
      });
    return Number.isNaN(ms) ? undefined : ms;
  };
  const since = instant('since');
  const until = instant('until');
  if (since !== undefined && until !== undefined && until <= since)
    errors.push({ pointer: '/until', message: 'must be later than since' });
  let identity: string | undefined;
  if (q.spiffe_id !== undefined) {
    const parsed = parseSpiffeId(q.spiffe_id);
    if (parsed.ok) identity = parsed.value.id;
    else errors.push({ pointer: '/spiffe_id', message: parsed.reason });
  }
  let beforeSeq: number | undefined;
  if (q.cursor !== undefined) {
    const v = decodeCursor(String(q.cursor));
    if (v && v.length === 1 && Number.isSafeInteger(v[0]) && (v[0] as number) > 0) beforeSeq = v[0] as number;
    else errors.push({ pointer: '/cursor', message: 'is not a cursor this API gave' });
  }
  if (errors.length > 0) return errors;
  return {
    ...(identity !== undefined ? { identity } : {}),
    ...(q.order_id !== undefined ? { orderId: String(q.order_id) } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(beforeSeq !== undefined ? { beforeSeq } : {}),
    limit: (q.limit as number | undefined) ?? DEFAULT_LIMIT,
  };
}

/** GET /api/v2/operator/audit: entries matching every filter, newest first, cursor-paginated. */
export function searchAuditHandler(d: AuditRoutesDeps) {
  return async function searchAudit(req: FastifyRequest, reply: FastifyReply) {
    const contract = operatorContract();
    const q = { ...(req.query as Record<string, unknown>) };
    if (!contract.searchAuditQuery(q))
      return sendProblem(reply, badQuery(violations(contract.searchAuditQuery.errors)), AUDIT_PATH);
    const query = auditQuery(q);
    if (Array.isArray(query)) return sendProblem(reply, badQuery(query), AUDIT_PATH);
    // Entries still queued (written a few ms after their responses) are part of the answer.
    await d.state.audit.flush();
    // One more than asked says whether there is a next page without a count.
    const found = await d.state.audit.query({ ...query, limit: query.limit + 1 });
    const entries = found.slice(0, query.limit);
    const last = entries[entries.length - 1];
    return reply.header('cache-control', 'no-store').send({
      entries: entries.map(entryJson),
      next_cursor: found.length > query.limit && last ? encodeCursor([last.seq]) : null,
    });
  };
}

/** GET /api/v2/operator/audit/verify: the chain walked against its keys and checkpoints. */
export function verifyAuditHandler(d: AuditRoutesDeps) {
  // One walk at a time: concurrent requests share it (the walk reads the whole log).
  let running: Promise<AuditReport> | undefined;
  return async function verifyAudit(req: FastifyRequest, reply: FastifyReply) {
    const contract = operatorContract();
    const q = { ...(req.query as Record<string, unknown>) };
    if (!contract.verifyAuditQuery(q))
      return sendProblem(reply, badQuery(violations(contract.verifyAuditQuery.errors)), VERIFY_PATH);
    running ??= d.state.audit
      .flush()
      .then(() => d.state.verifyAudit())
      .finally(() => {
        running = undefined;
      });
    const r = await running;
    const checkedAt = iso(d.clock.now());
    return reply.header('cache-control', 'no-store').send(
      r.ok
        ? {
            ok: true,
            entries: r.entries,
            anchored_up_to: r.anchoredUpTo,
            unanchored: r.unanchored,
            first_broken: null,
            checked_at: checkedAt,
          }
        : {
            ok: false,
            entries: null,
            anchored_up_to: null,
            unanchored: null,
            first_broken: { seq: r.seq, kind: r.kind, problem: r.problem.slice(0, 2000) },
            checked_at: checkedAt,
          },
    );
  };
}

/**
 * GET /api/v2/operator/audit/consistency?first=&second=: the RFC 9162 consistency proof between
 * two sizes of the audit's Merkle tree, with the signed head of the later one
 * (docs/audit-proofs.md).
 */
export function auditConsistencyHandler(d: AuditRoutesDeps) {
  return async function auditConsistency(req: FastifyRequest, reply: FastifyReply) {
    const contract = operatorContract();
    const q = { ...(req.query as Record<string, unknown>) };
    if (!contract.auditConsistencyQuery(q))
      return sendProblem(
        reply,
        badQuery(violations(contract.auditConsistencyQuery.errors)),
        CONSISTENCY_PATH,
      );
    const first = q.first as number;
    const second = q.second as number | undefined;
    if (second !== undefined && second < first)
      return sendProblem(
        reply,
        badQuery([{ pointer: '/second', message: 'must be at least first' }]),
        CONSISTENCY_PATH,
      );
    const proofs = d.state.auditProofs;
    if (!proofs) return sendProblem(reply, proofsUnavailable(), CONSISTENCY_PATH);
    const r = await proofs.consistency(first, second);
    if ('beyond' in r)
      return sendProblem(
        reply,
        beyondTree(`/${r.asked}`, r.asked === 'first' ? first : (second as number), r.beyond),
        CONSISTENCY_PATH,
      );
    return reply.header('cache-control', 'no-store').send(r);
  };
}
