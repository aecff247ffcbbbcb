import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import {
  buyable,
  type CheckoutSession,
  SESSION_ID,
} from '../../../subgraphs/procurement/checkout/session.ts';
import { renderUcpOrder, shipmentsOf } from '../../../subgraphs/procurement/webhooks/ucp-order.ts';
import type { LinkingParts } from '../../oauth/index.ts';
import { acpIdempotencyRecord } from '../acp/idempotency.ts';
import { echoRequestId } from '../acp/version.ts';
import { auditStep } from '../audit/audit.ts';
import type { AuditLog } from '../audit/log.ts';
import { blockBookkeeping, blockStep } from '../block/block.ts';
import type { BlockStore } from '../block/store.ts';
import { type CheckoutService, CheckoutUnavailable, type Outcome } from '../checkout/service.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import type { OrderPort } from '../order/order-port.ts';
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
import { ORDER_CREATE_SCOPE, ORDER_READ_SCOPE, type ScopePolicy } from '../scope/policy.ts';
import { problemAsUcpError, sendUcpError, UcpError, ucpError, ucpErrorOfProblem } from './errors.ts';
import { missingSelections, nextFulfillment, regionOf } from './fulfillment.ts';
import { ucpIdempotencyStep } from './idempotency.ts';
import { ucpAgentStep, ucpIdentityStep, ucpProfileStep, ucpScopeStep } from './identity.ts';
import { purchaseOrderOf } from './payment.ts';
import type { ProfileFetcher } from './platform-profile.ts';
import { CHECKOUT, DISCOUNT, FULFILLMENT, ORDER } from './profile.ts';
import {
  type ExtraMessage,
  errorResponse,
  fulfillmentActive,
  renderCheckout,
  UCP_CODE,
  type UcpRenderOptions,
} from './render.ts';
import { checkoutInput } from './request.ts';
import { ucpValidator } from './schema/index.ts';
import type { UcpSignatureVerifier } from './signature.ts';
import { tls13 } from './tls.ts';

export interface UcpRouteDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly keys: ApiKeyVerifier;
  readonly signatures: UcpSignatureVerifier;
  readonly profiles: ProfileFetcher;
  readonly policy: ScopePolicy;
  readonly blocks: BlockStore;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly idempotency: IdempotencyStore;
  readonly audit: AuditLog;
  readonly checkout: CheckoutService;
  readonly orders: OrderPort;
  readonly render: UcpRenderOptions;
  /** The path of the REST endpoint, where the routes are served (`/ucp`). */
  readonly basePath: string;
  /** The REST endpoint (absolute), for order permalinks. */
  readonly restEndpoint: string;
  /** Where a buyer goes when nothing can be done over the API (the storefront / console). */
  readonly continueUrl: string;
  readonly defaultRegion: string;
  readonly bodyLimit: number;
  /** More routes of the endpoint, in its scope (its parser, errors and unmatched paths): the catalog. */
  readonly more?: (scope: FastifyInstance) => void;
  /** Identity linking (gateway/oauth/): its tokens are a credential, its challenge on 401/403. */
  readonly linking?: LinkingParts;
}

type Op = 'create' | 'update' | 'complete';

/**
 * The UCP checkout REST binding (checkout-rest.md) and `GET /orders/{id}` (order-rest.md) as the
 * agent chain's visible sequence of hooks, the same steps as ACP and POST /v2/orders:
 *
 *   onRequest     0 UCP-Agent (400) → 1 identity: API key, linked token or RFC 9421 signature (401)
 *                 → 2 scope (403)
 *                 → 3 block (429) → 4 rate limit (429) → 4' platform profile, version, negotiation
 *                 (400/422/424; 200 capabilities_incompatible)
 *   preParsing    5 media type, announced size (415, 413)
 *   parser        5 size, UTF-8, strict JSON, signed Content-Digest (413, 400)
 *   preValidation 5 parse verdict (400) → 6 the operation's view of the vendored schema (400)
 *   preHandler    7 Idempotency-Key (replay, 409)
 *   handler       the session core (gateway/agent/checkout/), rendered as UCP's checkout
 *   onSend        problems as UCP errors → Request-Id echo → 3' block bookkeeping → 7' idempotency record
 *   onResponse    9 audit entry
 */
export async function registerUcpRoutes(app: FastifyInstance, d: UcpRouteDeps): Promise<void> {
  const blockOptions = { store: d.blocks, clock: d.clock, log: d.log };
  const gate = (scope: string, root: string) => [
    ucpAgentStep(d.profiles),
    ucpIdentityStep(d.keys, d.signatures, d.log, d.linking),
    ucpScopeStep(d.policy, scope, d.linking),
    blockStep(blockOptions),
    rateLimitStep({ store: d.buckets, policy: d.bucketPolicy, clock: d.clock }),
    ucpProfileStep(d.profiles, root, d.continueUrl),
  ];
  const checkoutGate = gate(ORDER_CREATE_SCOPE, CHECKOUT);
  const onSend = [
    problemAsUcpError,
    echoRequestId,
    blockBookkeeping(blockOptions),
    acpIdempotencyRecord({ store: d.idempotency, clock: d.clock, log: d.log }),
  ];
  const onResponse = [auditStep(d.audit, d.clock)];
  const idempotency = ucpIdempotencyStep({ store: d.idempotency, clock: d.clock });
  const write = (op: Op | 'cancel') => ({
    bodyLimit: d.bodyLimit,
    onRequest: checkoutGate,
    preParsing: [op === 'cancel' ? optionalBodyMediaType(d.bodyLimit) : mediaTypeStep(d.bodyLimit)],
    preValidation: op === 'cancel' ? [optionalJson] : [requireJson, contract(op)],
    preHandler: [idempotency],
    onSend,
    onResponse,
  });
  const h = handlers(d);
  await app.register(
    async (scope) => {
      registerStrictJsonParser(scope);
      scope.setErrorHandler((err, req, reply) => ucpErrorHandler(err, req, reply, d));
      scope.addHook('onRequest', tls13);
      // Paths under the endpoint that no route takes (or not with this method) are UCP errors too;
      // so are the router's refusals of paths it cannot read (lib/http/app.ts). Not when the
      // endpoint is the server's root: the rest of the server keeps its own answers.
      if (d.basePath !== '') {
        const routes: { path: RegExp; method: string }[] = [];
        scope.addHook('onRoute', (r) => {
          for (const method of [r.method].flat()) routes.push({ path: routePattern(r.url), method });
        });
        scope.setNotFoundHandler((req, reply) => unmatched(req, reply, routes));
        app.answerRouterRefusals(d.basePath, (problem, _req, reply) =>
          sendUcpError(reply, ucpErrorOfProblem(problem.body)),
        );
      }
      scope.post('/checkout-sessions', { ...write('create'), handler: h.create });
      scope.get('/checkout-sessions/:id', { onRequest: checkoutGate, onSend, onResponse, handler: h.get });
      scope.put('/checkout-sessions/:id', { ...write('update'), handler: h.update });
      scope.post('/checkout-sessions/:id/complete', { ...write('complete'), handler: h.complete });
      scope.post('/checkout-sessions/:id/cancel', { ...write('cancel'), handler: h.cancel });
      scope.get('/orders/:id', {
        onRequest: gate(ORDER_READ_SCOPE, ORDER),
        onSend,
        onResponse,
        handler: h.order,
      });
      d.more?.(scope);
    },
    { prefix: d.basePath },
  );
}

/** Step 6: the body against the operation's view of checkout with both extensions (400). */
function contract(op: Op) {
  const validate = ucpValidator(
    op === 'complete' ? 'checkout' : 'checkout_with_discount_and_fulfillment',
    'request',
    op,
  );
  return async function schema(req: FastifyRequest, reply: FastifyReply) {
    const violations = validate(req.body);
    const first = violations[0];
    if (!first) {
      req.agent.validBody = true;
      return;
    }
    req.agent.contractError = true;
    req.agent.reason = `contract: ${violations
      .slice(0, 5)
      .map((v) => `${v.param} ${v.message}`)
      .join('; ')}`;
    return sendUcpError(
      reply,
      ucpError(400, first.keyword === 'required' ? 'missing' : 'invalid', `${first.param} ${first.message}`, {
        path: first.param,
      }),
    );
  };
}

type WithId = FastifyRequest<{ Params: { id: string } }>;

function handlers(d: UcpRouteDeps) {
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type('application/json').send(JSON.stringify(body));
  const negotiated = (req: FastifyRequest) => req.ucp?.negotiated ?? new Map<string, string>();
  const show = (
    req: FastifyRequest,
    reply: FastifyReply,
    s: CheckoutSession,
    extra: ExtraMessage[] = [],
    status = 200,
  ) => send(reply, status, renderCheckout(s, negotiated(req), d.render, extra));
  const identityOf = (req: FastifyRequest) => {
    const id = req.agent.identity;
    if (!id) throw new Error('UCP chain reached a handler without identity');
    return id;
  };
  const notFound = (req: FastifyRequest, reply: FastifyReply, what: string) => {
    req.agent.reason = `ucp: ${what}: not found for this platform`;
    return sendUcpError(reply, ucpError(404, 'not_found', `No such ${what} for this platform.`));
  };

  /** A session outcome as HTTP: the checkout (200 with messages), or why there is none. */
  const answer = (req: FastifyRequest, reply: FastifyReply, o: Outcome, what: string) => {
    switch (o.kind) {
      case 'ok':
        req.agent.reason = `ok; ucp: ${what} ${o.session.id} (${o.session.status})`;
        if (o.session.orderId) req.agent.orderId = o.session.orderId;
        return show(req, reply, o.session);
      case 'not-found':
        return notFound(req, reply, 'checkout session');
      case 'not-allowed':
        // checkout.md: a business SHOULD answer "an error indicating the operation is not
        // allowed" to an update, completion or cancellation of a completed or canceled checkout.
        // 409 with invalid_state, as the reference server answers and conformance suites expect
        // (a 200 with the checkout and a message read as success to them); issue 50, docs/ucp.md.
        // Kept under its Idempotency-Key like any 4xx, so a replay answers the same.
        req.agent.reason = `ucp: ${what}: session ${o.session.status}`;
        return sendUcpError(
          reply,
          ucpError(
            409,
            'invalid_state',
            `The checkout is ${o.session.status.replace(/_/g, ' ')}: it cannot be ${what === 'complete' ? 'completed' : what === 'cancel' ? 'canceled' : 'changed'}.`,
          ),
        );
      case 'not-ready':
        // A business outcome: the checkout as it stands, with a recoverable message.
        req.agent.reason = `ucp: ${what}: session ${o.session.status}`;
        return show(req, reply, o.session, [
          {
            type: 'error',
            code: 'not_ready',
            content: 'The checkout is not ready for completion; resolve its error messages first.',
            severity: 'recoverable',
          },
        ]);
      case 'busy':
        req.agent.reason = `ucp: ${what}: session busy (${o.session.status})`;
        return sendUcpError(
          reply,
          ucpError(409, 'session_busy', 'The checkout is being completed; retry shortly.', {
            headers: { 'retry-after': '1' },
          }),
        );
    }
  };

  const sessionId = (req: WithId, reply: FastifyReply): string | undefined => {
    if (SESSION_ID.test(req.params.id)) return req.params.id;
    notFound(req, reply, 'checkout session');
    return undefined;
  };

  const refused = (req: FastifyRequest, reply: FastifyReply, path: string, content: string) => {
    req.agent.contractError = true;
    req.agent.validBody = false;
    req.agent.reason = `contract: ${path} ${content}`;
    return sendUcpError(reply, ucpError(400, 'invalid', content, { path }));
  };

  return {
    async create(req: FastifyRequest, reply: FastifyReply) {
      const input = checkoutInput(req.body as Record<string, unknown>);
      if (!input.ok) return refused(req, reply, input.error.path, input.error.content);
      const ucp = req.ucp;
      const n = negotiated(req);
      const extensions = [DISCOUNT, FULFILLMENT].filter((c) => n.has(c));
      const f = n.has(FULFILLMENT)
        ? nextFulfillment(null, input.value.fulfillment, input.value.items.length)
        : undefined;
      const { session } = await d.checkout.create({
        protocol: 'ucp',
        owner: identityOf(req),
        agentId: ucp?.agentId ?? '',
        keyId: ucp?.key?.id ?? null,
        channel: {
          protocol: 'ucp',
          profileUrl: ucp?.profileUrl ?? '',
          ...(ucp?.profile?.orderWebhookUrl ? { orderWebhookUrl: ucp.profile.orderWebhookUrl } : {}),
        },
        currency: 'USD',
        region: regionOf(f?.fulfillment ?? null, d.defaultRegion),
        items: input.value.items,
        codes: n.has(DISCOUNT) ? (input.value.codes ?? []) : [],
        extensions,
        buyer: input.value.buyer ?? null,
        fulfillment: f?.fulfillment ?? null,
      });
      // Nothing in it can be bought (every item unknown or out of stock): UCP's error_response,
      // no checkout to show.
      if (!buyable(session)) {
        req.agent.reason = `ok; ucp: create refused: no item can be bought (${session.id} stays unused)`;
        return send(
          reply,
          200,
          errorResponse(
            session.problems
              .filter((p) => p.item !== undefined)
              .map((p) => ({
                type: 'error' as const,
                code: UCP_CODE[p.kind],
                path: `$.line_items[${p.item}]`,
                content: p.message,
                severity: 'unrecoverable' as const,
              })),
            d.continueUrl,
          ),
        );
      }
      req.agent.reason = `ok; ucp: created ${session.id} (${session.status})`;
      reply.header('location', `${d.basePath}/checkout-sessions/${session.id}`);
      return show(req, reply, session, fulfillmentMessages(f?.problems), 201);
    },
    async get(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const s = await d.checkout.get(id, identityOf(req));
      return answer(req, reply, s ? { kind: 'ok', session: s } : { kind: 'not-found' }, 'read');
    },
    async update(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const input = checkoutInput(req.body as Record<string, unknown>);
      if (!input.ok) return refused(req, reply, input.error.path, input.error.content);
      const owner = identityOf(req);
      const before = await d.checkout.get(id, owner);
      if (!before) return notFound(req, reply, 'checkout session');
      const f = fulfillmentActive(before)
        ? nextFulfillment(before.fulfillment, input.value.fulfillment, input.value.items.length)
        : undefined;
      const o = await d.checkout.update(id, owner, {
        items: input.value.items,
        ...(input.value.codes && before.extensions.includes(DISCOUNT) ? { codes: input.value.codes } : {}),
        ...(input.value.buyer !== undefined ? { buyer: input.value.buyer } : {}),
        ...(f ? { fulfillment: f.fulfillment, region: regionOf(f.fulfillment, d.defaultRegion) } : {}),
      });
      if (o.kind === 'ok' && f && f.problems.length > 0)
        return show(req, reply, o.session, fulfillmentMessages(f.problems));
      return answer(req, reply, o, 'update');
    },
    async complete(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      const owner = identityOf(req);
      const s = await d.checkout.get(id, owner);
      if (!s) return notFound(req, reply, 'checkout session');
      const body = req.body as { payment?: unknown };
      const pay = purchaseOrderOf(body.payment);
      const open = s.status === 'ready_for_payment' || s.status === 'not_ready_for_payment';
      // Business outcomes before anything is reserved: the checkout, not completed, with why.
      if (open && !pay.ok) {
        req.agent.reason = `ucp: complete: payment refused (${pay.content})`;
        return show(req, reply, s, [
          {
            type: 'error',
            code: 'payment_failed',
            path: pay.path,
            content: pay.content,
            severity: 'recoverable',
          },
        ]);
      }
      if (open && fulfillmentActive(s) && missingSelections(s.fulfillment).length > 0) {
        req.agent.reason = 'ucp: complete: fulfillment not selected';
        return show(req, reply, s);
      }
      const o = await d.checkout.complete(id, owner, {
        purchaseOrderNumber: pay.ok ? pay.purchaseOrderNumber : '',
        traceId: req.traceId,
      });
      return answer(req, reply, o, 'complete');
    },
    async cancel(req: WithId, reply: FastifyReply) {
      const id = sessionId(req, reply);
      if (!id) return reply;
      return answer(req, reply, await d.checkout.cancel(id, identityOf(req)), 'cancel');
    },
    /** The caller's own orders only: an order placed from another identity's session is 404. */
    async order(req: WithId, reply: FastifyReply) {
      const orderId = req.params.id;
      if (!/^ord_[0-9a-f]{32}$/.test(orderId)) return notFound(req, reply, 'order');
      const found = await d.orders.get(orderId).catch((err: unknown) => {
        throw new CheckoutUnavailable(err instanceof Error ? err.message : 'order domain unavailable');
      });
      const owner = identityOf(req);
      if (!found || found.spiffeId !== owner.id || !found.checkoutSessionId)
        return notFound(req, reply, 'order');
      const session = await d.checkout.get(found.checkoutSessionId, owner);
      if (!session) return notFound(req, reply, 'order');
      // Both adapters give the stored order; a port that does not cannot show it (503, retried).
      if (!found.order) throw new CheckoutUnavailable('the order port gave no stored order');
      req.agent.reason = `ok; ucp: order ${orderId} read`;
      req.agent.orderId = orderId;
      // The order as its events show it (subgraphs/procurement/webhooks/ucp-order.ts): its own lines,
      // shipments and adjustments, the same current-state snapshot.
      return send(
        reply,
        200,
        renderUcpOrder({
          order: found.order,
          session,
          restEndpoint: d.restEndpoint,
          shipments: shipmentsOf(found.order),
        }),
      );
    },
  };
}

const fulfillmentMessages = (problems: { path: string; content: string }[] | undefined): ExtraMessage[] =>
  (problems ?? []).map((p) => ({
    type: 'error',
    code: 'invalid',
    path: p.path,
    content: p.content,
    severity: 'recoverable',
  }));

/** Anything thrown: the client's mistakes as 4xx, the dependencies' absence as 503, never a 500. */
function ucpErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply, d: UcpRouteDeps) {
  const parsed = parseErrorProblem(req, err as { code?: string; statusCode?: number }, d.bodyLimit);
  if (parsed) return sendUcpError(reply, ucpErrorOfProblem(parsed.body));
  if (err instanceof UcpError) return sendUcpError(reply, err);
  if (!(err instanceof CheckoutUnavailable)) d.log.error({ err, traceId: req.traceId }, 'UCP step failed');
  if (req.agent) req.agent.reason = `ucp: unavailable (${err instanceof Error ? err.message : 'unknown'})`;
  return sendUcpError(
    reply,
    ucpError(503, 'service_unavailable', 'The business cannot answer this now; retry shortly.', {
      headers: { 'retry-after': '1' },
    }),
  );
}

/** A route's URL (`/ucp/checkout-sessions/:id`) as a pattern for a raw request path. */
const routePattern = (url: string): RegExp =>
  new RegExp(
    `^${url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}$`,
  );

/** No route under the endpoint: 405 with Allow when the path is a route's under another method, else 404. */
function unmatched(
  req: FastifyRequest,
  reply: FastifyReply,
  routes: readonly { path: RegExp; method: string }[],
) {
  const path = req.url.split('?', 1)[0] ?? '';
  const allowed = [...new Set(routes.filter((r) => r.path.test(path)).map((r) => r.method))];
  if (allowed.length > 0)
    return sendUcpError(
      reply,
      ucpError(
        405,
        'method_not_allowed',
        `${req.method.slice(0, 16)} is not allowed here; use ${allowed.join(', ')}.`,
        {
          headers: { allow: allowed.join(', ') },
        },
      ),
    );
  return sendUcpError(reply, ucpError(404, 'not_found', 'No such resource under the UCP endpoint.'));
}
