import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Rehearsals } from '../../../lib/http/rehearsal.ts';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { purchaseOrderResponseJson } from '../../../subgraphs/procurement/contract/json.ts';
import { orderIdFor } from '../../../subgraphs/procurement/domain/order-domain.ts';
import { OrderIdConflict } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import { appliedPolicy, withPolicy } from '../approval/approval.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import { domainUnavailable, idempotencyKeyReused, notFound } from '../problems.ts';
import { releaseUnplaced } from '../spend/spend.ts';
import { DomainUnavailable, type OrderPort } from './order-port.ts';

export const CANONICAL_PATH = '/api/v2/procurement/orders';
/** Order ids the domain issues; anything else is unknown without asking the store. */
export const ORDER_ID = /^ord_[0-9a-f]{32}$/;

export interface PlaceOptions {
  readonly orders: OrderPort;
  readonly idempotency: IdempotencyStore;
  readonly clock: { now(): number };
  readonly log: Logger;
  /** The spend ledger whose reservation is given back when the order was certainly not stored. */
  readonly spend?: SpendLedger;
  /** The warm-up's rehearsals, counted for its audit entry (issue 48). */
  readonly rehearsals?: Rehearsals;
}

/**
 * Step 8 (handler): the order domain stores the order durably, then 201 with Location (202 when
 * it waits for an operator's approval, PENDING_APPROVAL with expires_at). When
 * the domain cannot, 503 with Retry-After, and an Idempotency-Key is released for the retry.
 * With a key the order id is derived from it, so when the failure was a timeout after the
 * commit, the retry finds that order instead of placing a second one.
 */
export function placeOrderHandler(o: PlaceOptions) {
  return async function placeOrder(req: FastifyRequest, reply: FastifyReply) {
    const { identity, order, idempotency, spend, approval } = req.agent;
    if (!identity || !order) throw new Error('agent chain reached the handler without identity and order');
    // The id the spend step reserved under (it is the key's when there is a key), or the key's.
    // Without either the domain picks the id: an id given to it is looked up first (a retry may
    // have stored it), an extra read per order that only a key or a reservation needs.
    const orderId =
      (spend?.reserved ? spend.orderId : undefined) ??
      (idempotency ? orderIdFor(idempotency.key) : undefined);
    let body: string;
    let location: string;
    let status: 201 | 202;
    try {
      const created = await o.orders.place({
        request: order,
        spiffeId: identity.id,
        traceId: req.traceId,
        ...(orderId ? { orderId } : {}),
        ...(approval ? { approvalsRequired: approval.required } : {}),
        ...withPolicy(appliedPolicy(spend?.status)),
        ...(req.agent.rehearsal ? { rehearsal: true as const } : {}),
      });
      // Written by hand so allocated_budget is the exact decimal, not a double's text.
      body = purchaseOrderResponseJson(created);
      location = `${CANONICAL_PATH}/${created.order_id}`;
      // Stored but waiting for a human (issue 22): 202, the same Location to read its fate.
      status = created.status === 'PENDING_APPROVAL' ? 202 : 201;
    } catch (err) {
      if (err instanceof OrderIdConflict) {
        // The key's order was stored by an earlier attempt whose reply was lost (a 503 released
        // the key): this body is another request. Nothing new was stored; the reservation under
        // that order id is the first order's, so it stays.
        req.agent.reason = 'idempotency: key reused with another body (found with the stored order)';
        if (idempotency) await o.idempotency.release(idempotency.key).catch(() => {});
        return sendProblem(reply, idempotencyKeyReused(), req.url);
      }
      o.log.error({ err, traceId: req.traceId }, 'order domain unavailable');
      req.agent.reason = 'order domain unavailable';
      if (idempotency) await o.idempotency.release(idempotency.key).catch(() => {});
      if (o.spend && err instanceof DomainUnavailable && err.notStored)
        await releaseUnplaced(o.spend, req, o.clock, o.log);
      return sendProblem(reply, domainUnavailable(), req.url);
    }
    if (req.agent.rehearsal) {
      // Nothing was stored: the key and the spend the chain took are given back (issue 48).
      await rehearsed(req, o);
      return reply.code(status).header('location', location).type('application/json').send(body);
    }
    if (idempotency)
      // The order exists now: a failure to remember the reply must not turn it into an error.
      await o.idempotency
        .complete(idempotency.key, idempotency.fingerprint, { status, body, location }, o.clock.now())
        .catch((err) => o.log.error({ err, traceId: req.traceId }, 'idempotency record not stored'));
    return reply.code(status).header('location', location).type('application/json').send(body);
  };
}

/** After a rehearsed order (the warm-up's): its Idempotency-Key and spend reservation released. */
async function rehearsed(req: FastifyRequest, o: PlaceOptions): Promise<void> {
  o.rehearsals?.count('order');
  const key = req.agent.idempotency?.key;
  if (key) await o.idempotency.release(key).catch(() => {});
  if (o.spend) await releaseUnplaced(o.spend, req, o.clock, o.log);
}

/**
 * The caller's own order by the id in the path, or undefined with the 404 already sent: an id
 * of another form, an unknown order and another identity's all answer the same, so ids do not
 * leak; an unreachable order domain is 503. `step` names the route in the audit reason.
 */
export async function ownOrder(
  req: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  o: Pick<PlaceOptions, 'orders' | 'log'>,
  step: string,
): Promise<NonNullable<Awaited<ReturnType<OrderPort['get']>>> | undefined> {
  if (!ORDER_ID.test(req.params.id)) {
    req.agent.reason = `${step}: not an order id`;
    sendProblem(reply, notFound(), req.url);
    return undefined;
  }
  let found: Awaited<ReturnType<OrderPort['get']>>;
  try {
    found = await o.orders.get(req.params.id);
  } catch (err) {
    o.log.error({ err, traceId: req.traceId }, 'order domain unavailable');
    req.agent.reason = 'order domain unavailable';
    sendProblem(reply, domainUnavailable('the order domain'), req.url);
    return undefined;
  }
  if (!found || found.spiffeId !== req.agent.identity?.id) {
    req.agent.reason = `${step}: no such order for this identity`;
    sendProblem(reply, notFound(), req.url);
    return undefined;
  }
  return found;
}

/** GET of the Location: the order as PurchaseOrderResponse, to the identity that placed it only. */
export function readOrderHandler(o: Pick<PlaceOptions, 'orders' | 'log'>) {
  return async function readOrder(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const found = await ownOrder(req, reply, o, 'read');
    if (!found) return reply;
    return reply.type('application/json').send(purchaseOrderResponseJson(found.response));
  };
}
