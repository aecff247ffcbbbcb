import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UcpOperationGroup } from '../../../subgraphs/procurement/identity-linking/scopes.ts';
import { acpIdempotencyRecord } from '../acp/idempotency.ts';
import { echoRequestId } from '../acp/version.ts';
import { auditStep } from '../audit/audit.ts';
import { blockBookkeeping, blockStep } from '../block/block.ts';
import {
  mediaTypeStep,
  optionalBodyMediaType,
  optionalJson,
  registerStrictJsonParser,
  requireJson,
} from '../parse/parse.ts';
import { rateLimitStep } from '../rate-limit/rate-limit.ts';
import { ORDER_CREATE_SCOPE, ORDER_READ_SCOPE } from '../scope/policy.ts';
import { registerUcpCartRoutes } from './cart.ts';
import { checkoutHandlers } from './checkout-handlers.ts';
import { problemAsUcpError, sendUcpError, type UcpError, ucpError, ucpErrorOfProblem } from './errors.ts';
import { ucpIdempotencyStep } from './idempotency.ts';
import { ucpAgentStep, ucpIdentityStep, ucpProfileStep, ucpScopeStep } from './identity.ts';
import { CART, CHECKOUT, ORDER } from './profile.ts';
import { type ResponseSigner, signReply, signUcpResponses } from './response-signature.ts';
import type { UcpRouteDeps } from './route-deps.ts';
import { routePattern, ucpErrorHandler, unmatched } from './route-errors.ts';
import { type UcpValidate, ucpValidator } from './schema/index.ts';
import { tls13 } from './tls.ts';

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
 *                 → the response signed (RFC 9421 `@status`, Content-Digest; ./response-signature.ts)
 *   onResponse    9 audit entry
 */
export async function registerUcpRoutes(app: FastifyInstance, d: UcpRouteDeps): Promise<void> {
  const blockOptions = { store: d.blocks, clock: d.clock, log: d.log };
  const gate = (scope: string, group: UcpOperationGroup, root: string) => [
    ucpAgentStep(d.profiles, d.rehearsals),
    ucpIdentityStep(d.keys, d.signatures, d.log, d.linking, d.rehearsals),
    ucpScopeStep(d.policy, scope, group, d.linking),
    blockStep(blockOptions),
    rateLimitStep({ store: d.buckets, policy: d.bucketPolicy, clock: d.clock }),
    ucpProfileStep(d.profiles, root, d.continueUrl),
  ];
  const checkoutGate = gate(ORDER_CREATE_SCOPE, 'checkout', CHECKOUT);
  const signer = { clock: d.clock, log: d.log, signingKey: d.ap2.signingKey };
  const signResponse = signUcpResponses(signer);
  const onSend = [
    problemAsUcpError,
    echoRequestId,
    blockBookkeeping(blockOptions),
    acpIdempotencyRecord({ store: d.idempotency, clock: d.clock, log: d.log }),
    signResponse,
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
  const h = checkoutHandlers(d);
  await app.register(
    async (scope) => {
      registerStrictJsonParser(scope);
      scope.setErrorHandler((err, req, reply) => ucpErrorHandler(err, req, reply, d));
      scope.addHook('onRequest', tls13);
      // Route hooks run after the scope's: routes sign last in their own onSend; this copy signs
      // the answers of paths no route takes (404, 405).
      scope.addHook('onSend', signUcpResponses(signer, { notFoundOnly: true }));
      // Paths under the endpoint that no route takes (or not with this method) are UCP errors too;
      // so are the router's refusals of paths it cannot read (lib/http/app.ts). Not when the
      // endpoint is the server's root: the rest of the server keeps its own answers.
      if (d.basePath !== '') {
        const routes: { path: RegExp; method: string }[] = [];
        scope.addHook('onRoute', (r) => {
          for (const method of [r.method].flat()) routes.push({ path: routePattern(r.url), method });
        });
        scope.setNotFoundHandler((req, reply) => unmatched(req, reply, routes));
        app.answerRouterRefusals(d.basePath, (problem, req, reply) =>
          sendRouterRefusal(signer, req, reply, ucpErrorOfProblem(problem.body)),
        );
      }
      scope.post('/checkout-sessions', { ...write('create'), handler: h.create });
      scope.get('/checkout-sessions/:id', { onRequest: checkoutGate, onSend, onResponse, handler: h.get });
      scope.put('/checkout-sessions/:id', { ...write('update'), handler: h.update });
      scope.post('/checkout-sessions/:id/complete', { ...write('complete'), handler: h.complete });
      scope.post('/checkout-sessions/:id/cancel', { ...write('cancel'), handler: h.cancel });
      scope.get('/orders/:id', {
        onRequest: gate(ORDER_READ_SCOPE, 'order', ORDER),
        onSend,
        onResponse,
        handler: h.order,
      });
      if (d.carts)
        registerUcpCartRoutes(
          scope,
          {
            gate: gate(ORDER_CREATE_SCOPE, 'cart', CART),
            onSend,
            onResponse,
            idempotency: [idempotency],
            contract,
            bodyLimit: d.bodyLimit,
          },
          d.carts,
        );
      d.more?.(scope, signResponse);
    },
    { prefix: d.basePath },
  );
}

/**
 * Step 6: the body against the operation's view of checkout with its extensions (400), or of
 * another shape (the cart's: ./cart.ts).
 */
function contract(op: Op | UcpValidate) {
  const validate =
    typeof op === 'function'
      ? op
      : ucpValidator(op === 'complete' ? 'checkout' : 'checkout_with_extensions', 'request', op);
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

/**
 * A refusal of the router (a path it cannot decode, a parameter over its length), answered in
 * the server's root context where no hook of the endpoint runs: the UCP error body, signed here
 * as onSend signs every other answer.
 */
async function sendRouterRefusal(s: ResponseSigner, req: FastifyRequest, reply: FastifyReply, e: UcpError) {
  const body = JSON.stringify(e.body);
  // The type as Fastify completes it when it sends a string (onSend sees it completed too).
  reply.code(e.status).headers(e.headers).type('application/json; charset=utf-8');
  await signReply(s, req, reply, body);
  return reply.send(body);
}
