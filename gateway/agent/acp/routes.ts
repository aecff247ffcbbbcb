import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { orderPlaced, SESSION_ID } from '../../../subgraphs/procurement/checkout/session.ts';
import { auditStep } from '../audit/audit.ts';
import type { AuditLog } from '../audit/log.ts';
import { blockBookkeeping, blockStep } from '../block/block.ts';
import type { BlockStore } from '../block/store.ts';
import { type CheckoutService, CheckoutUnavailable, type Outcome } from '../checkout/service.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import {
  mediaTypeStep,
  optionalBodyMediaType,
  optionalJson,
  parseErrorProblem,
  registerStrictJsonParser,
  requireJson,
} from '../parse/parse.ts';
import type { BucketPolicy } from '../rate-limit/bucket.ts';
import { rateLimitStep } from '../rate-limit/rate-limit.ts';
import type { BucketStore } from '../rate-limit/store.ts';
import type { CheckoutRehearsals } from '../rehearsal.ts';
import { ORDER_CREATE_SCOPE, type ScopePolicy } from '../scope/policy.ts';
import { type AcpCartDeps, registerAcpCartRoutes } from './cart.ts';
import { acpContract } from './contract.ts';
import { AcpError, acpError, acpErrorOfProblem, problemAsAcpError, sendAcpError } from './errors.ts';
import { acpIdempotencyRecord, acpIdempotencyStep, recordDigest, sessionIdOfRecord } from './idempotency.ts';
import { acpIdentityStep, acpScopeStep } from './identity.ts';
import { type RenderOptions, renderSession } from './render.ts';
import { type AcpRequestLimits, completeInput, createInput, updateInput } from './request.ts';
import { apiVersionStep, echoRequestId } from './version.ts';

export interface AcpRouteDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly keys: ApiKeyVerifier;
  readonly policy: ScopePolicy;
  readonly blocks: BlockStore;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly idempotency: IdempotencyStore;
  /** How long the idempotency store keeps a reply: a create's twin younger than this is its replay. */
  readonly replyTtlMs: number;
  readonly audit: AuditLog;
  readonly checkout: CheckoutService;
  readonly limits: AcpRequestLimits;
  readonly render: RenderOptions;
  /** The path of api_base_url, where the five operations are served (`/acp`). */
  readonly basePath: string;
  readonly bodyLimit: number;
  /** The Cart API on the same steps (./cart.ts); absent: no /carts. */
  readonly carts?: AcpCartDeps;
  /**
   * The warm-up's checkout rehearsals (issue 48, gateway/agent/rehearsal.ts): its calls act as
   * the reserved identity, its completions are counted for the warm-up's audit entry, and the
   * sessions it creates are told (`created`) so that they are deleted when it ends.
   */
  readonly rehearsals?: CheckoutRehearsals;
}

/**
 * The five ACP checkout operations as the agent chain's visible sequence of hooks, in the same
 * order as POST /v2/orders (gateway/agent/chain.ts), with ACP's own first and last words:
 *
 *   onRequest     API-Version (400) → 1 API key identity (401) → 2 scope (403) → 3 block (429)
 *                 → 4 rate limit (429)
 *   preParsing    5 media type, announced size (415, 413)
 *   parser        5 size, UTF-8, strict JSON (413, 400)
 *   preValidation 5 parse verdict (400) → 6 the bundle's request schema (400 invalid_request)
 *   preHandler    7 Idempotency-Key (400 missing, replay, 409, 422)
 *   handler       the session core (gateway/agent/checkout/), rendered as ACP's CheckoutSession
 *   onSend        problems as ACP errors → Request-Id echo → 3' block bookkeeping
 *                 → 7' idempotency record (kept, or freed after a 5xx)
 *   onResponse    9 audit entry
 *
 * GET runs the onRequest steps and the handler. Every operation needs `orders:create`: a
 * checkout is the buying flow, and a key that may not order has no use for one.
 */
export async function registerAcpRoutes(app: FastifyInstance, d: AcpRouteDeps): Promise<void> {
  const blockOptions = { store: d.blocks, clock: d.clock, log: d.log };
  const gate = [
    apiVersionStep,
    acpIdentityStep(d.keys, d.log, d.rehearsals),
    acpScopeStep(d.policy, ORDER_CREATE_SCOPE),
    blockStep(blockOptions),
    rateLimitStep({ store: d.buckets, policy: d.bucketPolicy, clock: d.clock }),
  ];
  const onSend = [
    problemAsAcpError,
    echoRequestId,
    blockBookkeeping(blockOptions),
    acpIdempotencyRecord({ store: d.idempotency, clock: d.clock, log: d.log }),
  ];
  const onResponse = [auditStep(d.audit, d.clock)];
  const idempotency = acpIdempotencyStep({ store: d.idempotency, clock: d.clock });
  const post = (def: Parameters<typeof acpContract>[0], bodyOptional = false) => ({
    bodyLimit: d.bodyLimit,
    onRequest: gate,
    preParsing: [bodyOptional ? optionalBodyMediaType(d.bodyLimit) : mediaTypeStep(d.bodyLimit)],
    preValidation: bodyOptional ? [optionalJson, acpContract(def)] : [requireJson, acpContract(def)],
    preHandler: [idempotency],
    onSend,
    onResponse,
  });
  const h = handlers(d);

  await app.register(
    async (scope) => {
      registerStrictJsonParser(scope);
      scope.setErrorHandler((err, req, reply) => acpErrorHandler(err, req, reply, d));
      scope.post('/checkout_sessions', { ...post('CheckoutSessionCreateRequest'), handler: h.create });
      scope.post('/checkout_sessions/:id', { ...post('CheckoutSessionUpdateRequest'), handler: h.update });
      scope.get('/checkout_sessions/:id', { onRequest: gate, onSend, onResponse, handler: h.get });
      scope.post('/checkout_sessions/:id/complete', {
        ...post('CheckoutSessionCompleteRequest'),
        handler: h.complete,
      });
      scope.post('/checkout_sessions/:id/cancel', {
        ...post('CancelSessionRequest', true),
        handler: h.cancel,
      });
      if (d.carts)
        registerAcpCartRoutes(
          scope,
          { gate, onSend, onResponse, idempotency: [idempotency], bodyLimit: d.bodyLimit },
          d.carts,
        );
    },
    { prefix: d.basePath },
  );
}

type WithId = FastifyRequest<{ Params: { id: string } }>;

function handlers(d: AcpRouteDeps) {
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type('application/json').send(JSON.stringify(body));

  /** A session outcome as HTTP: the session, or ACP's error for why there is none. */
  const answer = (req: FastifyRequest, reply: FastifyReply, o: Outcome, what: string) => {
    switch (o.kind) {
      case 'ok':
        req.agent.reason = `ok; acp: ${what} ${o.session.id} (${o.session.status})`;
        if (o.session.orderId) req.agent.orderId = o.session.orderId;
        return send(reply, 200, renderSession(o.session, d.render));
      case 'not-found':
        req.agent.reason = `acp: ${what}: no such session for this identity`;
        return sendAcpError(reply, acpError(404, 'not_found', 'No such checkout session for this API key.'));
      case 'not-allowed':
        req.agent.reason = `acp: ${what}: session ${o.session.status}`;
        return sendAcpError(
          reply,
          acpError(
            405,
            `session_${o.session.status}`,
            `The checkout session is ${o.session.status.replace(/_/g, ' ')}.`,
          ),
        ).header('allow', 'GET');
      case 'not-ready': {
        const first = renderSession(o.session, d.render).messages as {
          type: string;
          param?: string;
          content: string;
        }[];
        const blocking = first.find((m) => m.type === 'error');
        req.agent.reason = `acp: ${what}: session not ready`;
        return sendAcpError(
          reply,
          acpError(
            400,
            'session_not_ready',
            `The checkout session is not ready for payment${blocking ? `: ${blocking.content}` : ''}.`,
            blocking?.param,
          ),
        );
      }
      case 'busy':
        req.agent.reason = `acp: ${what}: session busy (${o.session.status})`;
        return sendAcpError(
          reply,
          acpError(
            409,
            'session_busy',
            'The checkout session is being completed; retry shortly.',
            undefined,
            {
              'retry-after': '1',
            },
          ),
        );
    }
  };

  const sessionId = (req: WithId, reply: FastifyReply): string | undefined => {
    if (SESSION_ID.test(req.params.id)) return req.params.id;
    req.agent.reason = 'acp: not a session id';
    sendAcpError(reply, acpError(404, 'not_found', 'No such checkout session for this API key.'));
    return undefined;
  };

  const identityOf = (req: FastifyRequest) => {
    const id = req.agent.identity;
    if (!id) throw new Error('ACP chain reached a handler without identity');
    return id;
  };

  return {
    async create(req: FastifyRequest, reply: FastifyReply) {
      const input = createInput(req.body as Record<string, unknown>, d.limits);
      if (!input.ok) return refused(req, reply, input.error);
      const key = req.acpKey;
      const held = req.acpIdempotency;
      const { session, existing } = await d.checkout.create({
        protocol: 'acp',
        owner: identityOf(req),
        agentId: key?.agentId ?? '',
        keyId: key?.id ?? null,
        ...input.value,
        ...(held ? { id: sessionIdOfRecord(held), replayWithinMs: d.replyTtlMs } : {}),
      });
      if (held) held.recoverable = true;
      if (req.agent.rehearsal) d.rehearsals?.created(session.id);
      if (existing) {
        // Its reply was lost (a crash before it was stored): the session it made answers.
        reply.header('idempotent-replayed', 'true');
        req.agent.reason = `idempotency: replayed from ${session.id} (${session.status})`;
      } else req.agent.reason = `ok; acp: created ${session.id} (${session.status})`;
      reply.header('location', `${d.basePath}/checkout_sessions/${session.id}`);
      return send(reply, 201, renderSession(session, d.render));
    },
    async update(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const input = updateInput(req.body as Record<string, unknown>);
      if (!input.ok) return refused(req, reply, input.error);
      return answer(req, reply, await d.checkout.update(id, identityOf(req), input.value), 'updated');
    },
    async get(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const s = await d.checkout.get(id, identityOf(req));
      return answer(req, reply, s ? { kind: 'ok', session: s } : { kind: 'not-found' }, 'read');
    },
    async complete(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const input = completeInput(req.body as Record<string, unknown>);
      if (!input.ok) return refused(req, reply, input.error);
      const held = req.acpIdempotency;
      const record = held ? recordDigest(held) : undefined;
      const rehearsal = req.agent.rehearsal;
      const o = await d.checkout.complete(id, identityOf(req), {
        ...input.value,
        traceId: req.traceId,
        ...(record ? { record } : {}),
        ...(rehearsal ? { rehearsal: true as const } : {}),
      });
      if (rehearsal && o.kind === 'ok' && orderPlaced(o.session)) d.rehearsals?.count('completion');
      if (o.kind !== 'ok') return answer(req, reply, o, 'complete');
      // Completed, the session keeps this request's record: a retry after a lost reply is
      // answered from it, so the reply is stored without the answer waiting for it.
      if (held && orderPlaced(o.session) && o.session.completedBy === record) held.recoverable = true;
      if (o.replayed) reply.header('idempotent-replayed', 'true');
      return answer(req, reply, o, o.replayed ? 'complete (replayed: its reply was lost)' : 'complete');
    },
    async cancel(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      return answer(req, reply, await d.checkout.cancel(id, identityOf(req)), 'cancel');
    },
  };
}

/** A body that passed the bundle but not this merchant's limits: 400, counted as a contract error. */
function refused(req: FastifyRequest, reply: FastifyReply, e: AcpError) {
  req.agent.contractError = true;
  req.agent.validBody = false;
  req.agent.reason = `contract: ${e.body.param ?? ''} ${e.body.message}`;
  return sendAcpError(reply, e);
}

/** Anything thrown: the client's mistakes as 4xx, the dependencies' absence as 503, never a 500. */
function acpErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply, d: AcpRouteDeps) {
  const parsed = parseErrorProblem(req, err as { code?: string; statusCode?: number }, d.bodyLimit);
  if (parsed) return sendAcpError(reply, acpErrorOfProblem(parsed.body));
  if (err instanceof AcpError) return sendAcpError(reply, err);
  if (!(err instanceof CheckoutUnavailable)) d.log.error({ err, traceId: req.traceId }, 'ACP step failed');
  if (req.agent) req.agent.reason = `acp: unavailable (${err instanceof Error ? err.message : 'unknown'})`;
  return sendAcpError(
    reply,
    acpError(503, 'service_unavailable', 'The merchant cannot answer this now; retry shortly.', undefined, {
      'retry-after': '1',
    }),
  );
}
