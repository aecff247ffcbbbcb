import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  buyable,
  type CheckoutSession,
  orderPlaced,
  SESSION_ID,
} from '../../../subgraphs/procurement/checkout/session.ts';
import { renderUcpOrder, shipmentsOf } from '../../../subgraphs/procurement/webhooks/ucp-order.ts';
import { CheckoutUnavailable, type Outcome } from '../checkout/service.ts';
import { ap2Locked, signedCheckoutText, verifyCompletion } from './ap2.ts';
import { checkoutFromCart } from './cart.ts';
import { sendUcpError, ucpError } from './errors.ts';
import { missingSelections, nextFulfillment, regionOf } from './fulfillment.ts';
import { purchaseOrderOf } from './payment.ts';
import { AP2, BUYER_CONSENT, CART, DISCOUNT, FULFILLMENT } from './profile.ts';
import { type ExtraMessage, errorResponse, fulfillmentActive, renderCheckout, UCP_CODE } from './render.ts';
import { buyerOf, checkoutInput, type UcpCheckoutInput } from './request.ts';
import type { UcpRouteDeps } from './route-deps.ts';

/**
 * The UCP checkout binding's handlers (./routes.ts registers them behind the agent chain's
 * steps): create (a new checkout, or one converted from a cart), get, update, complete (with
 * an AP2 mandate when the session is locked into the flow), cancel, and the order read. Each
 * translates the request into the session core's command and renders its outcome as UCP's
 * checkout, message or error.
 */

type WithId = FastifyRequest<{ Params: { id: string } }>;

export function checkoutHandlers(d: UcpRouteDeps) {
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).type('application/json').send(JSON.stringify(body));
  const negotiated = (req: FastifyRequest) => req.ucp?.negotiated ?? new Map<string, string>();
  /** The checkout as UCP's; a session locked into AP2 signs every one (ap2.merchant_authorization). */
  const show = async (
    req: FastifyRequest,
    reply: FastifyReply,
    s: CheckoutSession,
    extra: ExtraMessage[] = [],
    status = 200,
  ) => {
    const body = renderCheckout(s, negotiated(req), d.render, extra);
    if (!ap2Locked(s)) return send(reply, status, body);
    const text = await signedCheckoutText(body, s, d.ap2);
    return reply.code(status).type('application/json').send(text);
  };
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

  /** A locked session's completion: the mandate verified against the checkout as it stands. */
  const completionMandate = (req: FastifyRequest, s: CheckoutSession, body: { ap2?: unknown }) =>
    verifyCompletion(body, s, () => renderCheckout(s, negotiated(req), d.render), req.ucp?.profile, d.ap2);

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

  /** A new checkout for the platform from its (or its cart's) items; the region falls back to `region`. */
  const newCheckout = async (req: FastifyRequest, input: UcpCheckoutInput, region: string) => {
    const ucp = req.ucp;
    const n = negotiated(req);
    // AP2 negotiated at creation locks the session into the mandate flow (./ap2.ts).
    const extensions = [DISCOUNT, FULFILLMENT, BUYER_CONSENT, AP2].filter((c) => n.has(c));
    const f = n.has(FULFILLMENT) ? nextFulfillment(null, input.fulfillment, input.items.length) : undefined;
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
      region: regionOf(f?.fulfillment ?? null, region),
      items: input.items,
      codes: n.has(DISCOUNT) ? (input.codes ?? []) : [],
      extensions,
      buyer: buyerOf(input.buyer, extensions) ?? null,
      fulfillment: f?.fulfillment ?? null,
    });
    if (req.agent.rehearsal) d.rehearsals?.created(session.id);
    return { session, f };
  };

  return {
    async create(req: FastifyRequest, reply: FastifyReply) {
      const body = req.body as Record<string, unknown>;
      const cartId = typeof body.cart_id === 'string' ? body.cart_id : undefined;
      const input = checkoutInput(body, cartId !== undefined);
      if (!input.ok) return refused(req, reply, input.error.path, input.error.content);
      // Conversion (cart.md): the cart's line items, buyer and region; the request's own ignored.
      if (cartId !== undefined) {
        if (!d.carts || !negotiated(req).has(CART))
          return refused(
            req,
            reply,
            '$.cart_id',
            'cart_id needs dev.ucp.shopping.cart in the platform profile.',
          );
        return checkoutFromCart(req, reply, {
          cartId,
          carts: d.carts.carts,
          checkout: {
            get: (id, owner) => d.checkout.get(id, owner),
            create: async (cart) =>
              (
                await newCheckout(
                  req,
                  {
                    ...input.value,
                    items: [...cart.items],
                    ...(cart.buyer ? { buyer: { ...cart.buyer } } : {}),
                  },
                  cart.region,
                )
              ).session,
          },
          show: (session, status) => show(req, reply, session, [], status),
          basePath: d.basePath,
        });
      }
      const { session, f } = await newCheckout(req, input.value, d.defaultRegion);
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
        ...(input.value.buyer !== undefined ? { buyer: buyerOf(input.value.buyer, before.extensions) } : {}),
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
      const body = req.body as { payment?: unknown; ap2?: unknown };
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
      const mandate = open && ap2Locked(s) ? await completionMandate(req, s, body) : undefined;
      if (mandate && !mandate.ok) {
        req.agent.reason = mandate.reason;
        return sendUcpError(reply, mandate.error);
      }
      const rehearsal = req.agent.rehearsal;
      const o = await d.checkout
        .complete(id, owner, {
          purchaseOrderNumber: pay.ok ? pay.purchaseOrderNumber : '',
          traceId: req.traceId,
          ...(mandate?.ok ? { authorization: mandate.authorization, authorizedVersion: s.version } : {}),
          ...(rehearsal ? { rehearsal: true as const } : {}),
        })
        .catch(async (err: unknown) => {
          // Nothing completed: the mandate may be presented again.
          await mandate?.release();
          throw err;
        });
      // Used only if the session took it (not busy, not changed by a concurrent update).
      if (
        mandate?.ok &&
        !(o.kind === 'ok' && o.session.authorization?.mandateSha256 === mandate.authorization.mandateSha256)
      )
        await mandate.release();
      // answer() sets the reason before it sends: the audit entry then names the mandate (its
      // SHA-256), so the entry's inclusion proof covers the evidence kept with the order.
      if (rehearsal && o.kind === 'ok' && orderPlaced(o.session)) d.rehearsals?.count('completion');
      const answered = answer(req, reply, o, 'complete');
      if (mandate?.ok) req.agent.reason += `; ap2: mandate sha-256 ${mandate.authorization.mandateSha256}`;
      return answered;
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
