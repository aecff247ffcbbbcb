import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Cart } from '../../../subgraphs/procurement/cart/cart.ts';
import { CART_ID } from '../../../subgraphs/procurement/cart/cart.ts';
import type { SessionPricing } from '../../../subgraphs/procurement/checkout/session.ts';
import type { CartOutcome, CartService } from '../cart/service.ts';
import { mediaTypeStep, optionalBodyMediaType, optionalJson, requireJson } from '../parse/parse.ts';
import { acpContract } from './contract.ts';
import { type AcpError, acpError, sendAcpError } from './errors.ts';
import { lineItemOf, messageOf, total } from './render.ts';
import { itemsOf } from './request.ts';
import { acpCartValidator } from './schema/index.ts';

/**
 * ACP's Cart API (openapi.cart.yaml, rfc.cart.md, release 2026-04-17): POST /carts, GET and PUT
 * /carts/{id}, POST /carts/{id}/cancel under api_base_url, on the agent chain's steps exactly as
 * the checkout routes (API-Version, API key, scope, block, rate limit, media type, strict JSON,
 * the vendored schema, Idempotency-Key on every write, ACP's Error body) and on the one cart
 * service UCP's carts use (gateway/agent/cart/). A cart has no status: an unknown, expired,
 * canceled or another key's cart is 404 `not_found`; a create (or replacement) in which no item
 * can be bought is 422 `out_of_stock` and nothing is stored (openapi.cart.yaml). This release has
 * no `cart_id` on checkout create (the RFC defers it): an agent reads the cart and creates its
 * checkout session with the cart's line items (docs/carts.md).
 */

/** The chain's steps of the checkout routes, shared (./routes.ts). */
export interface AcpCartSteps {
  readonly gate: NonNullable<RouteShorthandOptions['onRequest']>;
  readonly onSend: NonNullable<RouteShorthandOptions['onSend']>;
  readonly onResponse: NonNullable<RouteShorthandOptions['onResponse']>;
  readonly idempotency: NonNullable<RouteShorthandOptions['preHandler']>;
  readonly bodyLimit: number;
}

export interface AcpCartDeps {
  readonly carts: CartService;
  /** Upper-case ISO 4217: the merchant's first currency (a cart request names none). */
  readonly currency: string;
  readonly defaultRegion: string;
}

type Body = Record<string, unknown>;
type WithId = FastifyRequest<{ Params: { id: string } }>;

/** The cart as ACP's Cart (schema.cart.json): minor units, lower-case currency, messages. */
export function renderAcpCart(c: Cart): Record<string, unknown> {
  const t = c.pricing.totals;
  return {
    id: c.id,
    line_items: c.pricing.lines.map((l) => lineItemOf(l, c.items)),
    ...(c.buyer ? { buyer: c.buyer } : {}),
    currency: c.currency.toLowerCase(),
    totals: [
      total('items_base_amount', 'Items', t.baseCents),
      total('items_discount', 'Discounts', t.discountCents),
      total('subtotal', 'Subtotal', t.subtotalCents),
      total('total', 'Estimated total', t.totalCents),
    ],
    messages: c.pricing.problems.map(messageOf),
    expires_at: new Date(c.expiresAt).toISOString(),
  };
}

const objectOrNull = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' ? (JSON.parse(JSON.stringify(v)) as Record<string, unknown>) : null;

/** Why nothing could be bought: the first line's problem names it (422, nothing stored). */
function unavailable(p: SessionPricing): AcpError {
  const first = p.problems.find((x) => x.item !== undefined && x.blocking);
  return acpError(
    422,
    'out_of_stock',
    `None of the requested items can be bought${first ? `: ${first.message}` : ''}.`,
    first?.item !== undefined ? `$.line_items[${first.item}]` : '$.line_items',
  );
}

export function registerAcpCartRoutes(scope: FastifyInstance, s: AcpCartSteps, d: AcpCartDeps): void {
  const write = (def: 'CartCreateRequest' | 'CartUpdateRequest' | null) => ({
    bodyLimit: s.bodyLimit,
    onRequest: s.gate,
    preParsing: [def ? mediaTypeStep(s.bodyLimit) : optionalBodyMediaType(s.bodyLimit)],
    // Cancel: an empty body or any object (openapi.cart.yaml: `type: object`).
    preValidation: def
      ? [requireJson, acpContract(acpCartValidator('request', def))]
      : [optionalJson, acpContract(cancelBody)],
    preHandler: s.idempotency,
    onSend: s.onSend,
    onResponse: s.onResponse,
  });
  const h = cartHandlers(d);
  scope.post('/carts', { ...write('CartCreateRequest'), handler: h.create });
  scope.get<{ Params: { id: string } }>('/carts/:id', {
    onRequest: s.gate,
    onSend: s.onSend,
    onResponse: s.onResponse,
    handler: h.get,
  });
  scope.put<{ Params: { id: string } }>('/carts/:id', { ...write('CartUpdateRequest'), handler: h.update });
  scope.post<{ Params: { id: string } }>('/carts/:id/cancel', { ...write(null), handler: h.cancel });
}

/** The cancel body: absent, or an object. */
const cancelBody = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'object' && !Array.isArray(v))
    ? []
    : [{ param: '$', message: 'must be object', keyword: 'type' }];

function cartHandlers(d: AcpCartDeps) {
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type('application/json').send(JSON.stringify(body));
  const identityOf = (req: FastifyRequest) => {
    const id = req.agent.identity;
    if (!id) throw new Error('ACP chain reached a cart handler without identity');
    return id;
  };
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    req.agent.reason = 'acp: cart: not found for this API key';
    return sendAcpError(
      reply,
      acpError(404, 'not_found', 'No such cart for this API key (or it expired, or was canceled).'),
    );
  };
  const refused = (req: FastifyRequest, reply: FastifyReply, e: AcpError) => {
    req.agent.contractError = true;
    req.agent.validBody = false;
    req.agent.reason = `contract: ${e.body.param ?? ''} ${e.body.message}`;
    return sendAcpError(reply, e);
  };
  const answer = (req: FastifyRequest, reply: FastifyReply, o: CartOutcome, what: string, status = 200) => {
    if (o.kind === 'not-found') return notFound(req, reply);
    if (o.kind === 'unavailable') {
      req.agent.reason = `acp: cart ${what}: no item can be bought (nothing stored)`;
      return sendAcpError(reply, unavailable(o.pricing));
    }
    req.agent.reason = `ok; acp: cart ${what} ${o.cart.id}`;
    if (status === 201) reply.header('location', `${req.url.replace(/\/+$/, '')}/${o.cart.id}`);
    return send(reply, status, renderAcpCart(o.cart));
  };
  const cartId = (req: WithId, reply: FastifyReply): string | undefined => {
    if (CART_ID.test(req.params.id)) return req.params.id;
    notFound(req, reply);
    return undefined;
  };

  return {
    async create(req: FastifyRequest, reply: FastifyReply) {
      const body = req.body as Body;
      const items = itemsOf(body);
      if (!items.ok) return refused(req, reply, items.error);
      const key = req.acpKey;
      const o = await d.carts.create({
        protocol: 'acp',
        owner: identityOf(req),
        agentId: key?.agentId ?? '',
        keyId: key?.id ?? null,
        currency: d.currency,
        region: d.defaultRegion,
        items: items.value ?? [],
        buyer: objectOrNull(body.buyer),
        context: null,
      });
      return answer(req, reply, o, 'created', 201);
    },
    async get(req: WithId, reply: FastifyReply) {
      const id = cartId(req, reply);
      if (!id) return reply;
      const c = await d.carts.get(id, identityOf(req));
      return answer(req, reply, c ? { kind: 'ok', cart: c } : { kind: 'not-found' }, 'read');
    },
    async update(req: WithId, reply: FastifyReply) {
      const id = cartId(req, reply);
      if (!id) return reply;
      const body = req.body as Body;
      const items = itemsOf(body);
      if (!items.ok) return refused(req, reply, items.error);
      const o = await d.carts.update(
        id,
        identityOf(req),
        {
          items: items.value ?? [],
          ...(body.buyer !== undefined ? { buyer: objectOrNull(body.buyer) } : {}),
        },
        { refuseUnbuyable: true },
      );
      return answer(req, reply, o, 'updated');
    },
    async cancel(req: WithId, reply: FastifyReply) {
      const id = cartId(req, reply);
      if (!id) return reply;
      return answer(req, reply, await d.carts.cancel(id, identityOf(req)), 'canceled');
    },
  };
}
