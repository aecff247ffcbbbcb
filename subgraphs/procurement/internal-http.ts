import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { GATEWAY_SECRET_HEADER, sameSecret } from '../../lib/auth/shared-secret.ts';
import { isProcurementAgentId } from '../../lib/auth/spiffe.ts';
import type { Config } from '../../lib/config.ts';
import { parseStrictJson } from '../../lib/json/strict-json.ts';
import { type Violation, validateCheckoutOrder, validatePurchaseOrderRequest } from './contract/validate.ts';
import { approvalPolicyOf } from './domain/approval-record.ts';
import { decodeCursor } from './domain/cursor.ts';
import type { OrderDomain } from './domain/order-domain.ts';
import { InvalidPlaceOrder, OrderIdConflict, type PlaceOrder } from './domain/purchase-order.ts';

/** Where the distributed gateway reaches the order domain (not a public path). */
export const INTERNAL_ORDERS_PATH = '/internal/procurement/orders';
/** The `code` of the 409 the place route answers for an order id taken by another request. */
export const ORDER_ID_CONFLICT = 'order-id-conflict';
export { GATEWAY_SECRET_HEADER, sameSecret };

interface PlaceBody {
  /** The PurchaseOrderRequest as JSON text (its number written exactly). */
  request: unknown;
  spiffeId: unknown;
  traceId: unknown;
  orderId?: unknown;
  approvalsRequired?: unknown;
  /** A checkout order's (docs/procurement.md, "Orders with many lines"). */
  lines?: unknown;
  total?: unknown;
  checkoutSessionId?: unknown;
  /** A checkout order's buyer consent (domain/buyer-consent.ts keeps the four known choices). */
  buyerConsent?: unknown;
  /** The gateway's warm-up order (issue 48): rolled back, nothing stored. */
  rehearsal?: unknown;
  /** The spend policy's approval thresholds that applied (issue 50). */
  approvalPolicy?: unknown;
}

/**
 * The order of a place body, checked again here (defence in depth): the agent's request as JSON
 * text, parsed strictly so its budget is judged exactly, against the /v2 contract; or, for a
 * checkout order, its request (built from the lines: the /v2 limits are not its rules) and its
 * lines, total and session. Whether they agree is the domain's check (InvalidPlaceOrder).
 */
function orderOf(
  b: PlaceBody,
):
  | { ok: true; value: Pick<PlaceOrder, 'request' | 'lines' | 'total' | 'checkoutSessionId'> }
  | { ok: false; error: string; errors: readonly Violation[] } {
  const parsed = typeof b.request === 'string' ? parseStrictJson(b.request) : undefined;
  const request = parsed?.ok ? parsed.value : undefined;
  if (b.lines !== undefined || b.total !== undefined || b.checkoutSessionId !== undefined) {
    const checkout = validateCheckoutOrder(request, b);
    return checkout.ok ? checkout : { ok: false, error: 'invalid checkout order', errors: checkout.errors };
  }
  const contract = validatePurchaseOrderRequest(request);
  return contract.ok
    ? { ok: true, value: { request: contract.value } }
    : { ok: false, error: 'invalid PurchaseOrderRequest', errors: contract.errors };
}

const ORDER_ID = /^ord_[0-9a-f]{32}$/;
/** The agent list's page bound (schemas/openapi/procurement.yaml, OrderListQuery.limit). */
export const MAX_PAGE = 100;
const GATEWAY_ONLY = { error: 'the order domain accepts calls from the gateway only' };

/**
 * Distributed topology: the order domain over HTTP, for gateway processes only (the shared
 * gateway secret). The domain re-checks what the gateway checked (defence in depth): the
 * contract and the identity; a refusal here is a 422/403 the gateway reports as unavailable.
 */
export function internalOrderRoutes(
  domain: OrderDomain,
  config: Pick<Config, 'GATEWAY_SHARED_SECRET' | 'SPIFFE_TRUST_DOMAINS' | 'ORDER_BODY_LIMIT_BYTES'>,
): FastifyPluginAsync {
  const fromGateway = (req: FastifyRequest) => {
    const secret = req.headers[GATEWAY_SECRET_HEADER];
    return typeof secret === 'string' && sameSecret(secret, config.GATEWAY_SHARED_SECRET);
  };
  return async (app) => {
    app.post<{ Body: PlaceBody }>(
      INTERNAL_ORDERS_PATH,
      // 50 lines of a checkout order take about 6 KiB beside the request and the identity.
      { bodyLimit: config.ORDER_BODY_LIMIT_BYTES * 2 + 16_384 },
      async (req, reply) => {
        const secret = req.headers[GATEWAY_SECRET_HEADER];
        if (typeof secret !== 'string' || !sameSecret(secret, config.GATEWAY_SHARED_SECRET))
          return reply.code(403).send({ error: 'the order domain accepts calls from the gateway only' });
        const body = req.body ?? ({} as PlaceBody);
        const order = orderOf(body);
        if (!order.ok) return reply.code(422).send({ error: order.error, errors: order.errors });
        if (
          !isProcurementAgentId(body.spiffeId, config.SPIFFE_TRUST_DOMAINS) ||
          typeof body.traceId !== 'string'
        )
          return reply.code(403).send({ error: 'not a procurement agent identity' });
        if (body.orderId !== undefined && (typeof body.orderId !== 'string' || !ORDER_ID.test(body.orderId)))
          return reply.code(422).send({ error: 'orderId is not an order id' });
        const approvals = body.approvalsRequired;
        if (approvals !== undefined && approvals !== 1 && approvals !== 2)
          return reply.code(422).send({ error: 'approvalsRequired is 1 or 2' });
        const policy = approvalPolicyOf(body.approvalPolicy);
        if (body.approvalPolicy !== undefined && !policy)
          return reply.code(422).send({ error: 'approvalPolicy is not an approval policy' });
        try {
          const created = await domain.place({
            ...order.value,
            spiffeId: body.spiffeId as string,
            traceId: body.traceId,
            ...(typeof body.orderId === 'string' ? { orderId: body.orderId } : {}),
            ...(approvals === 1 || approvals === 2 ? { approvalsRequired: approvals } : {}),
            ...(body.rehearsal === true ? { rehearsal: true as const } : {}),
            ...(body.buyerConsent !== undefined ? { buyerConsent: body.buyerConsent } : {}),
            ...(policy ? { approvalPolicy: policy } : {}),
          });
          return reply.code(201).send(created);
        } catch (err) {
          // Nothing was stored: the id belongs to an order of another request (a reused key).
          if (err instanceof OrderIdConflict)
            return reply.code(409).send({ error: err.message, code: ORDER_ID_CONFLICT });
          // Lines, total and request that disagree: refused, nothing stored.
          if (err instanceof InvalidPlaceOrder) return reply.code(422).send({ error: err.message });
          throw err;
        }
      },
    );
    app.get<{ Params: { id: string } }>(`${INTERNAL_ORDERS_PATH}/:id`, async (req, reply) => {
      if (!fromGateway(req)) return reply.code(403).send(GATEWAY_ONLY);
      const order = await domain.get(req.params.id);
      return order ? reply.send(order) : reply.code(404).send({ error: 'no such order' });
    });
    // The caller's own orders: the gateway checked the query; the domain checks it again.
    app.get<{ Querystring: Record<string, unknown> }>(INTERNAL_ORDERS_PATH, async (req, reply) => {
      if (!fromGateway(req)) return reply.code(403).send(GATEWAY_ONLY);
      const { spiffe_id: spiffeId, limit, cursor } = req.query;
      if (!isProcurementAgentId(spiffeId, config.SPIFFE_TRUST_DOMAINS))
        return reply.code(403).send({ error: 'not a procurement agent identity' });
      const n = typeof limit === 'string' && /^[0-9]{1,3}$/.test(limit) ? Number(limit) : 0;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (n < 1 || n > MAX_PAGE || (cursor !== undefined && !after))
        return reply.code(422).send({ error: 'limit or cursor is not acceptable' });
      const page = await domain.list({ spiffeId: spiffeId as string, limit: n, ...(after ? { after } : {}) });
      return reply.send(page);
    });
    app.post<{ Params: { id: string }; Body: { spiffeId?: unknown } }>(
      `${INTERNAL_ORDERS_PATH}/:id/cancel`,
      { bodyLimit: 4096 },
      async (req, reply) => {
        if (!fromGateway(req)) return reply.code(403).send(GATEWAY_ONLY);
        const spiffeId = req.body?.spiffeId;
        if (!isProcurementAgentId(spiffeId, config.SPIFFE_TRUST_DOMAINS))
          return reply.code(403).send({ error: 'not a procurement agent identity' });
        if (!ORDER_ID.test(req.params.id)) return reply.send({ kind: 'not-found' });
        return reply.send(await domain.cancel(req.params.id, spiffeId as string));
      },
    );
  };
}
