import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { CART_ID, type Cart } from '../../../subgraphs/procurement/cart/cart.ts';
import type { CheckoutSession, SessionPricing } from '../../../subgraphs/procurement/checkout/session.ts';
import type { CartOutcome, CartService, CheckoutPort } from '../cart/service.ts';
import { mediaTypeStep, optionalBodyMediaType, optionalJson, requireJson } from '../parse/parse.ts';
import { sendUcpError, ucpError } from './errors.ts';
import { CART, CHECKOUT } from './profile.ts';
import { errorResponse, lineItemOf, messageOf, total, UCP_CODE } from './render.ts';
import { lineItemsInput } from './request.ts';
import { UCP_VERSION, type UcpValidate, ucpValidator } from './schema/index.ts';

/**
 * UCP's cart capability over REST (cart.md, cart-rest.md): POST /carts, GET and PUT /carts/{id},
 * POST /carts/{id}/cancel under the REST endpoint, on the agent chain's steps exactly as checkout
 * (UCP-Agent, identity, scope, block, rate limit, the platform profile with `dev.ucp.shopping.cart`
 * negotiated, media type, strict JSON, the operation's view of cart.json, Idempotency-Key) and on
 * the one cart service ACP's carts use (gateway/agent/cart/). Estimated totals are the cart
 * quote's; unknown or unavailable items are `messages` at `$.line_items[i]`; a create where no
 * item can be bought is the spec's `error_response` (HTTP 200, no cart stored). A cart that does
 * not exist for this platform (never made, another's, expired, canceled, or cleared by its
 * completed checkout) is 404 `not_found`, as this business answers for checkouts and orders.
 */

/** The chain's steps of the checkout routes, shared (./routes.ts), and the cart's own gate. */
export interface UcpCartSteps {
  readonly gate: NonNullable<RouteShorthandOptions['onRequest']>;
  readonly onSend: NonNullable<RouteShorthandOptions['onSend']>;
  readonly onResponse: NonNullable<RouteShorthandOptions['onResponse']>;
  readonly idempotency: NonNullable<RouteShorthandOptions['preHandler']>;
  /** The operation's view of cart.json (400 `missing`/`invalid` at the first violation). */
  readonly contract: (
    validate: UcpValidate,
  ) => (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  readonly bodyLimit: number;
}

export interface UcpCartDeps {
  readonly carts: CartService;
  readonly defaultRegion: string;
  /** Where a platform goes when nothing can be done over the API. */
  readonly continueUrl: string;
}

type Body = Record<string, unknown>;
type WithId = FastifyRequest<{ Params: { id: string } }>;

/** The capabilities a cart response lists: cart, and checkout when negotiated (its conversion). */
function cartCapabilities(negotiated: ReadonlyMap<string, string>): Record<string, { version: string }[]> {
  const out: Record<string, { version: string }[]> = {};
  for (const name of [CHECKOUT, CART]) {
    const v = negotiated.get(name);
    if (v) out[name] = [{ version: v }];
  }
  return out;
}

/** The cart as UCP's cart (cart.json): minor units, upper-case currency, estimated totals. */
export function renderUcpCart(c: Cart, negotiated: ReadonlyMap<string, string>): Record<string, unknown> {
  const t = c.pricing.totals;
  return {
    ucp: { version: UCP_VERSION, status: 'success', capabilities: cartCapabilities(negotiated) },
    id: c.id,
    line_items: c.pricing.lines.map((l) => lineItemOf(l, c.items)),
    ...(c.context ? { context: c.context } : {}),
    ...(c.buyer ? { buyer: c.buyer } : {}),
    currency: c.currency.toUpperCase(),
    totals: [
      total('subtotal', t.baseCents, 'Subtotal'),
      ...(t.discountCents > 0 ? [total('items_discount', -t.discountCents, 'Discounts')] : []),
      total('total', t.totalCents, 'Estimated total (taxes and delivery at checkout)'),
    ],
    messages: c.pricing.problems.map(messageOf),
    expires_at: new Date(c.expiresAt).toISOString(),
  };
}

/** The pricing region from UCP's `context` (its two-letter country), else the default. */
export function regionOfContext(context: unknown, fallback: string): string {
  const c = (context && typeof context === 'object' ? context : {}) as Record<string, unknown>;
  const country = c.address_country;
  return typeof country === 'string' && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : fallback;
}

const objectOrNull = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' ? (JSON.parse(JSON.stringify(v)) as Record<string, unknown>) : null;

/** Nothing in it can be bought: one unrecoverable message per line (cart.md's error example). */
const unavailableResponse = (p: SessionPricing, continueUrl: string) =>
  errorResponse(
    p.problems
      .filter((x) => x.item !== undefined && x.blocking)
      .map((x) => ({
        type: 'error' as const,
        code: UCP_CODE[x.kind],
        path: `$.line_items[${x.item}]`,
        content: x.message,
        severity: 'unrecoverable' as const,
      })),
    continueUrl,
  );

export function registerUcpCartRoutes(scope: FastifyInstance, s: UcpCartSteps, d: UcpCartDeps): void {
  const write = (op: 'create' | 'update' | 'cancel') => ({
    bodyLimit: s.bodyLimit,
    onRequest: s.gate,
    preParsing: [op === 'cancel' ? optionalBodyMediaType(s.bodyLimit) : mediaTypeStep(s.bodyLimit)],
    preValidation:
      op === 'cancel' ? [optionalJson] : [requireJson, s.contract(ucpValidator('cart', 'request', op))],
    preHandler: s.idempotency,
    onSend: s.onSend,
    onResponse: s.onResponse,
  });
  const h = cartHandlers(d);
  scope.post('/carts', { ...write('create'), handler: h.create });
  scope.get<{ Params: { id: string } }>('/carts/:id', {
    onRequest: s.gate,
    onSend: s.onSend,
    onResponse: s.onResponse,
    handler: h.get,
  });
  scope.put<{ Params: { id: string } }>('/carts/:id', { ...write('update'), handler: h.update });
  scope.post<{ Params: { id: string } }>('/carts/:id/cancel', { ...write('cancel'), handler: h.cancel });
}

function cartHandlers(d: UcpCartDeps) {
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type('application/json').send(JSON.stringify(body));
  const negotiated = (req: FastifyRequest) => req.ucp?.negotiated ?? new Map<string, string>();
  const identityOf = (req: FastifyRequest) => {
    const id = req.agent.identity;
    if (!id) throw new Error('UCP chain reached a cart handler without identity');
    return id;
  };
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    req.agent.reason = 'ucp: cart: not found for this platform';
    return sendUcpError(
      reply,
      ucpError(404, 'not_found', 'No such cart for this platform (or it has expired).'),
    );
  };
  const refused = (req: FastifyRequest, reply: FastifyReply, path: string, content: string) => {
    req.agent.contractError = true;
    req.agent.validBody = false;
    req.agent.reason = `contract: ${path} ${content}`;
    return sendUcpError(reply, ucpError(400, 'invalid', content, { path }));
  };
  const answer = (req: FastifyRequest, reply: FastifyReply, o: CartOutcome, what: string, status = 200) => {
    if (o.kind === 'not-found') return notFound(req, reply);
    if (o.kind === 'unavailable') {
      req.agent.reason = `ok; ucp: cart ${what} refused: no item can be bought (nothing stored)`;
      return send(reply, 200, unavailableResponse(o.pricing, d.continueUrl));
    }
    req.agent.reason = `ok; ucp: cart ${what} ${o.cart.id}`;
    if (status === 201) reply.header('location', `${req.url.replace(/\/+$/, '')}/${o.cart.id}`);
    return send(reply, status, renderUcpCart(o.cart, negotiated(req)));
  };
  const cartId = (req: WithId, reply: FastifyReply): string | undefined => {
    if (CART_ID.test(req.params.id)) return req.params.id;
    notFound(req, reply);
    return undefined;
  };

  return {
    async create(req: FastifyRequest, reply: FastifyReply) {
      const body = req.body as Body;
      const items = lineItemsInput(body);
      if (!items.ok) return refused(req, reply, items.error.path, items.error.content);
      const ucp = req.ucp;
      const o = await d.carts.create({
        protocol: 'ucp',
        owner: identityOf(req),
        agentId: ucp?.agentId ?? '',
        keyId: ucp?.key?.id ?? null,
        currency: 'USD',
        region: regionOfContext(body.context, d.defaultRegion),
        items: items.value,
        buyer: objectOrNull(body.buyer),
        context: objectOrNull(body.context),
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
      const items = lineItemsInput(body);
      if (!items.ok) return refused(req, reply, items.error.path, items.error.content);
      const o = await d.carts.update(id, identityOf(req), {
        items: items.value,
        ...(body.buyer !== undefined ? { buyer: objectOrNull(body.buyer) } : {}),
        ...(body.context !== undefined
          ? { context: objectOrNull(body.context), region: regionOfContext(body.context, d.defaultRegion) }
          : {}),
      });
      return answer(req, reply, o, 'updated');
    },
    async cancel(req: WithId, reply: FastifyReply) {
      const id = cartId(req, reply);
      if (!id) return reply;
      return answer(req, reply, await d.carts.cancel(id, identityOf(req)), 'canceled');
    },
  };
}

/**
 * A checkout created with `cart_id` (cart.md, "Cart-to-Checkout Conversion"): the cart's
 * contents, the request's overlapping fields ignored (the caller built `checkout.create` so);
 * the incomplete checkout already made from the cart is answered instead of a second one (200,
 * a new one is 201). A cart that is not this platform's (or gone) is 404 `not_found` at
 * `$.cart_id`; so is one whose checkout was completed (the cart is then cleared: cart.md says
 * operations on a cleared cart return `not_found`).
 */
export async function checkoutFromCart(
  req: FastifyRequest,
  reply: FastifyReply,
  c: {
    readonly cartId: string;
    readonly carts: CartService;
    readonly checkout: CheckoutPort;
    readonly show: (session: CheckoutSession, status: number) => FastifyReply | Promise<FastifyReply>;
    readonly basePath: string;
  },
) {
  const gone = (content: string) => {
    req.agent.reason = `ucp: create from cart: ${content}`;
    return sendUcpError(reply, ucpError(404, 'not_found', content, { path: '$.cart_id' }));
  };
  const owner = req.agent.identity;
  if (!owner) throw new Error('UCP chain reached a handler without identity');
  if (!CART_ID.test(c.cartId)) return gone('No such cart for this platform (or it has expired).');
  const o = await c.carts.toCheckout(c.cartId, owner, c.checkout);
  if (o.kind === 'not-found') return gone('No such cart for this platform (or it has expired).');
  if (o.kind === 'cleared')
    return gone("The cart's checkout was completed, so the cart is cleared; create a new cart.");
  req.agent.reason = `ok; ucp: ${o.existing ? 'checkout of' : 'converted'} cart ${c.cartId}: ${o.session.id} (${o.session.status})`;
  if (!o.existing) reply.header('location', `${c.basePath}/checkout-sessions/${o.session.id}`);
  return c.show(o.session, o.existing ? 200 : 201);
}
