import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';
import type { CheckoutSessionStore } from '../../subgraphs/procurement/checkout/store.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { approvalStep } from './approval/approval.ts';
import { auditStep } from './audit/audit.ts';
import type { AuditLog } from './audit/log.ts';
import type { AuditProofs } from './audit/proofs.ts';
import { blockBookkeeping, blockStep } from './block/block.ts';
import type { BlockStore } from './block/store.ts';
import {
  type CatalogSlot,
  PRODUCTS_PATH,
  readProductHandler,
  searchProductsHandler,
} from './catalog/products.ts';
import { contract } from './contract/contract.ts';
import { idempotencyStep } from './idempotency/idempotency.ts';
import type { IdempotencyStore } from './idempotency/store.ts';
import { type IdentityOptions, identityStep } from './identity/identity.ts';
import { registerMcpRoutes } from './mcp/routes.ts';
import { auditProofHandler } from './order/audit-proof.ts';
import { orderAuthorizationHandler } from './order/authorization.ts';
import { cancelOrderHandler } from './order/cancel.ts';
import { listOrdersHandler } from './order/list.ts';
import type { OrderPort } from './order/order-port.ts';
import { CANONICAL_PATH, placeOrderHandler, readOrderHandler } from './order/place.ts';
import {
  mediaTypeStep,
  parseErrorProblem,
  registerStrictJsonParser,
  requireJson,
  requireNoFields,
} from './parse/parse.ts';
import { stateUnavailable } from './problems.ts';
import { AGENT_QUOTE_PATH, agentQuoteHandler, QUOTE_SCOPE, quoteContract } from './quote/quote.ts';
import type { BucketPolicy } from './rate-limit/bucket.ts';
import { rateLimitStep } from './rate-limit/rate-limit.ts';
import type { BucketStore } from './rate-limit/store.ts';
import { auditWarmUps, rehearsalStep } from './rehearsal.ts';
import {
  CATALOG_READ_SCOPE,
  ORDER_CANCEL_SCOPE,
  ORDER_CREATE_SCOPE,
  ORDER_READ_SCOPE,
  type ScopePolicy,
  SPEND_READ_SCOPE,
} from './scope/policy.ts';
import { scopeStep } from './scope/scope.ts';
import type { TokenVerifier } from './scope/token.ts';
import { readSpendHandler, SPEND_PATH, spendStep } from './spend/spend.ts';

/** The edge form of the same operation (see docs/procurement.md, "Two paths"). */
export const EDGE_PATH = '/v2/orders';
export { CANONICAL_PATH };

/** A cancel has no fields; room for `{}` and whitespace, nothing more to read. */
const CANCEL_BODY_LIMIT = 1024;

export interface AgentGatewayDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly identity: Omit<IdentityOptions, 'log'>;
  readonly policy: ScopePolicy;
  readonly tokens: TokenVerifier;
  readonly blocks: BlockStore;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly idempotency: IdempotencyStore;
  readonly orders: OrderPort;
  readonly audit: AuditLog;
  readonly bodyLimit: number;
  /** Spend policies and their ledger (docs/spend.md); orders without a policy: SPEND_POLICY_DEFAULT. */
  readonly spend: { readonly ledger: SpendLedger; readonly withoutPolicy: 'allow' | 'deny' };
  /** Inclusion proofs of an order's audit entries (docs/audit-proofs.md); absent: 503. */
  readonly auditProofs?: AuditProofs;
  /** Checkout sessions, where an order's authorization (an AP2 mandate) is kept (docs/ap2.md). */
  readonly sessions?: CheckoutSessionStore;
  /** The catalog agents search (bound once the edge has built it) and the region it prices in by default. */
  readonly catalog: { readonly slot: CatalogSlot; readonly defaultRegion: string };
}

/**
 * The agent purchase gateway as a visible sequence of Fastify hooks, in the spec's order;
 * a step that refuses answers and the later ones never run, so nothing invalid reaches the
 * order domain:
 *
 *   onRequest     1 identity (401) → 2 scope (403) → 3 block (429) → 4 rate limit (429)
 *   preParsing    5 media type, announced size (415, 413)
 *   parser        5 size, UTF-8, strict JSON (413)
 *   preValidation 5 parse verdict (400) → 6 contract (422)
 *   preHandler    7 idempotency key (replay, 409, 422) → 7½ spend policy (403, reserves the amount)
 *                 → 7¾ approval (the policy asks a human above approvalAbove: the order will wait)
 *   handler       8 order domain → 201, or 202 PENDING_APPROVAL (503; the reservation is given
 *                   back when nothing was stored)
 *   onSend        3' block bookkeeping (count contract errors, reset on a valid body)
 *   onResponse    9 audit entry
 *
 * Read, list and cancel (the order lifecycle) run steps 1–4 with their own scope
 * (orders:read, orders:cancel), then their query or (empty) body check, the domain, and 9; so
 * do the catalog's search and product (catalog:read; catalog/products.ts).
 */
export async function registerAgentRoutes(app: FastifyInstance, d: AgentGatewayDeps): Promise<void> {
  const s = sharedSteps(app, d);
  // The warm-up's reserved identity rehearses with this process's token, or is refused (1½).
  auditWarmUps(app.rehearsals, d.audit, d.clock, d.identity.trustDomains[0] ?? 'example.org');
  const createOrder = createOrderRoute(app, d, s);
  const lifecycle = lifecycleRoutes(d, s);
  const catalog = catalogRoutes(d, s);
  await app.register(async (scope) => {
    registerStrictJsonParser(scope);
    scope.setErrorHandler((err, req, reply) => agentErrorHandler(err, req, reply, d));
    scope.post(CANONICAL_PATH, createOrder);
    scope.post(EDGE_PATH, createOrder);
    scope.get(CANONICAL_PATH, lifecycle.listOrders);
    scope.get(`${CANONICAL_PATH}/:id`, lifecycle.readOrder);
    scope.get(`${CANONICAL_PATH}/:id/audit-proof`, lifecycle.auditProof);
    scope.get(`${CANONICAL_PATH}/:id/authorization`, lifecycle.orderAuthorization);
    scope.get(SPEND_PATH, readSpendRoute(s));
    scope.get(AGENT_QUOTE_PATH, quoteRoute(app, s));
    scope.get(PRODUCTS_PATH, catalog.searchProducts);
    scope.get(`${PRODUCTS_PATH}/:id`, catalog.readProduct);
    scope.post(`${CANONICAL_PATH}/:id/cancel`, lifecycle.cancelOrder);
  });
  // The same operations as MCP tools; each call runs through the routes above (mcp/server.ts).
  await registerMcpRoutes(app, d);
}

/** The steps every route shares (one instance each), and `gate`: steps 1–4 with a route's own scope. */
function sharedSteps(app: FastifyInstance, d: AgentGatewayDeps) {
  const blockOptions = { store: d.blocks, clock: d.clock, log: d.log };
  const identity = identityStep({ ...d.identity, log: d.log });
  const rehearsal = rehearsalStep(app.rehearsals);
  return {
    blockOptions,
    audit: auditStep(d.audit, d.clock),
    spendOptions: { ...d.spend, idempotency: d.idempotency, clock: d.clock, log: d.log },
    gate: (required: string) => [
      identity,
      rehearsal,
      scopeStep({ policy: d.policy, tokens: d.tokens, required, clock: d.clock }),
      blockStep(blockOptions),
      rateLimitStep({ store: d.buckets, policy: d.bucketPolicy, clock: d.clock }),
    ],
  };
}
type SharedSteps = ReturnType<typeof sharedSteps>;

/** Placing an order: every step of the sequence above. */
function createOrderRoute(app: FastifyInstance, d: AgentGatewayDeps, s: SharedSteps) {
  return {
    bodyLimit: d.bodyLimit,
    onRequest: s.gate(ORDER_CREATE_SCOPE),
    preParsing: [mediaTypeStep(d.bodyLimit)],
    preValidation: [requireJson, contract],
    preHandler: [
      idempotencyStep({ store: d.idempotency, clock: d.clock }),
      spendStep(s.spendOptions),
      approvalStep(),
    ],
    onSend: [blockBookkeeping(s.blockOptions)],
    onResponse: [s.audit],
    handler: placeOrderHandler({
      orders: d.orders,
      idempotency: d.idempotency,
      clock: d.clock,
      log: d.log,
      spend: d.spend.ledger,
      rehearsals: app.rehearsals,
    }),
  };
}

/**
 * The order lifecycle routes (read, list, cancel, the order's audit proof and authorization):
 * the same first steps, each with its own scope; a refusal of their query or body neither
 * counts towards the block nor resets it.
 */
function lifecycleRoutes(d: AgentGatewayDeps, s: SharedSteps) {
  const read = () => ({ onRequest: s.gate(ORDER_READ_SCOPE), onResponse: [s.audit] });
  return {
    // Reading back what Location names: the owner's order only (another's is 404).
    readOrder: { ...read(), handler: readOrderHandler({ orders: d.orders, log: d.log }) },
    // The order's audit entries with inclusion proofs in a signed tree head: the owner's only.
    auditProof: {
      ...read(),
      handler: auditProofHandler({ orders: d.orders, log: d.log, proofs: d.auditProofs }),
    },
    // The evidence the order's checkout was completed with (an AP2 mandate): the owner's only.
    orderAuthorization: {
      ...read(),
      handler: orderAuthorizationHandler({ orders: d.orders, log: d.log, sessions: d.sessions }),
    },
    listOrders: {
      ...read(),
      handler: listOrdersHandler({ orders: d.orders, log: d.log }),
    },
    cancelOrder: {
      bodyLimit: CANCEL_BODY_LIMIT,
      onRequest: s.gate(ORDER_CANCEL_SCOPE),
      preValidation: [requireNoFields],
      onResponse: [s.audit],
      handler: cancelOrderHandler({ orders: d.orders, log: d.log, spend: d.spend.ledger, clock: d.clock }),
    },
  };
}

/** The agent's own spend policy: identity, scope spend:read, block, rate limit, audit. */
function readSpendRoute(s: SharedSteps) {
  return {
    onRequest: s.gate(SPEND_READ_SCOPE),
    onResponse: [s.audit],
    handler: readSpendHandler(s.spendOptions),
  };
}

/**
 * The narrowed edge quote for agents: the order's checks up to the contract (a query here).
 * Its contract errors count towards the block as an order body's do (coupon or price probing).
 */
function quoteRoute(app: FastifyInstance, s: SharedSteps) {
  return {
    onRequest: s.gate(QUOTE_SCOPE),
    preValidation: [quoteContract],
    onSend: [blockBookkeeping(s.blockOptions)],
    onResponse: [s.audit],
    handler: agentQuoteHandler(app),
  };
}

/** The catalog (docs/catalog.md): the lifecycle routes' first steps with scope catalog:read. */
function catalogRoutes(d: AgentGatewayDeps, s: SharedSteps) {
  const products = { catalog: d.catalog.slot, log: d.log, defaultRegion: d.catalog.defaultRegion };
  return {
    searchProducts: {
      onRequest: s.gate(CATALOG_READ_SCOPE),
      onResponse: [s.audit],
      handler: searchProductsHandler(products),
    },
    readProduct: {
      onRequest: s.gate(CATALOG_READ_SCOPE),
      onResponse: [s.audit],
      handler: readProductHandler(products),
    },
  };
}

/** Anything thrown inside the chain becomes a problem: 4xx for what the client sent, else 503. */
function agentErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply, d: AgentGatewayDeps) {
  const e = err as { code?: string; statusCode?: number };
  const parsed = parseErrorProblem(req, e, d.bodyLimit);
  if (parsed) return sendProblem(reply, parsed, req.url);
  if (err instanceof Problem) return sendProblem(reply, err, req.url);
  // State stores (Redis) or an unexpected fault: the agent may retry; never a 500 with details.
  d.log.error({ err, traceId: req.traceId }, 'agent gateway step failed');
  if (req.agent) req.agent.reason = 'gateway state unavailable';
  return sendProblem(reply, stateUnavailable(), req.url);
}
