/**
 * The operator API (issue 14, docs/operator-api.md, schemas/openapi/operator.yaml): what the
 * console reads and steers on the agent gateway, on the gateway process in both topologies.
 *
 *   GET  /api/v2/operator/agents           agents:read   identities seen, bucket, block
 *   POST /api/v2/operator/agents/unblock   agents:admin  lift a block (audited)
 *   GET  /api/v2/operator/audit            audit:read    audit entries, newest first
 *   GET  /api/v2/operator/audit/verify     audit:read    the chain's verification
 *   GET  /api/v2/operator/audit/consistency audit:read   a consistency proof between tree heads
 *
 * Each route: the guard (agent refused 403, no token 401, role missing 403; for the POST, first
 * a page of another origin refused 403, guard.ts originGuard) in onRequest, then
 * the query or body checked against the document (400 / 415 / 413 / 422), then the handler.
 * Promotions preview is GraphQL (previewPromotions, promotions subgraph).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CallerVerifier } from '../../lib/auth/jwt.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ServedHosts } from '../../lib/http/served-hosts.ts';
import type { Logger } from '../../lib/logger.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';
import type { AgentGatewayState } from '../agent/index.ts';
import { AGENTS_PATH, listAgentsHandler, UNBLOCK_PATH, unblockHandler } from './agents.ts';
import {
  AUDIT_PATH,
  auditConsistencyHandler,
  CONSISTENCY_PATH,
  searchAuditHandler,
  VERIFY_PATH,
  verifyAuditHandler,
} from './audit.ts';
import { operatorGuard, originGuard } from './guard.ts';
import { stateUnavailable } from './problems.ts';

export const ROLES = {
  agentsRead: 'agents:read',
  agentsAdmin: 'agents:admin',
  auditRead: 'audit:read',
} as const;
/** An unblock body is one SPIFFE ID (at most 2048 bytes) in a small object. */
const UNBLOCK_BODY_LIMIT = 4096;

export interface OperatorDeps {
  readonly verifier: CallerVerifier;
  readonly trustDomains: readonly string[];
  /** Origins the state-changing routes accept (a page of this system, or no browser at all). */
  readonly servedHosts: Pick<ServedHosts, 'origin'>;
  readonly state: AgentGatewayState;
  readonly clock: Clock;
  readonly log: Logger;
}

export async function registerOperatorRoutes(app: FastifyInstance, d: OperatorDeps): Promise<void> {
  const guard = (role: string) => operatorGuard(d, role);
  await app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => operatorErrorHandler(err, req, reply, d.log));
    scope.get(AGENTS_PATH, { onRequest: guard(ROLES.agentsRead) }, listAgentsHandler(d));
    scope.post(
      UNBLOCK_PATH,
      { onRequest: [originGuard(d.servedHosts), guard(ROLES.agentsAdmin)], bodyLimit: UNBLOCK_BODY_LIMIT },
      unblockHandler(d),
    );
    scope.get(AUDIT_PATH, { onRequest: guard(ROLES.auditRead) }, searchAuditHandler(d));
    scope.get(VERIFY_PATH, { onRequest: guard(ROLES.auditRead) }, verifyAuditHandler(d));
    scope.get(CONSISTENCY_PATH, { onRequest: guard(ROLES.auditRead) }, auditConsistencyHandler(d));
  });
}

/**
 * What the client sent wrong (Fastify's parser errors: 400, 413, 415) keeps its 4xx status as a
 * problem; anything else is a store that did not answer: 503, details only in the log.
 */
function operatorErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply, log: Logger) {
  const instance = req.url.split('?')[0];
  if (err instanceof Problem) return sendProblem(reply, err, instance);
  const e = err as FastifyError;
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const titles: Record<number, [string, string]> = {
      413: ['body-too-large', 'Request body too large'],
      415: ['unsupported-media-type', 'Unsupported media type'],
    };
    const [slug, title] = titles[status] ?? ['malformed-request', 'Malformed request'];
    const detail =
      status === 415
        ? 'send the body as application/json'
        : status === 413
          ? 'the body is larger than this operation accepts'
          : 'the request body is not valid JSON';
    return sendProblem(reply, new Problem(status, slug, title, detail), instance);
  }
  log.error({ err, traceId: req.traceId }, 'operator API: state unavailable');
  return sendProblem(reply, stateUnavailable(), instance);
}
