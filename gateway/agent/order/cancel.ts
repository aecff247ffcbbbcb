import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { purchaseOrderResponseJson } from '../../../subgraphs/procurement/contract/json.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import { parseIdempotencyKey } from '../idempotency/key.ts';
import { badIdempotencyKey, domainUnavailable, notFound, orderNotCancellable } from '../problems.ts';
import type { CancelResult, OrderPort } from './order-port.ts';

const ORDER_ID = /^ord_[0-9a-f]{32}$/;

/**
 * POST /api/v2/procurement/orders/{order_id}/cancel (handler): 200 with the CANCELLED order,
 * the same 200 again for an order already cancelled (idempotent by nature, so an
 * Idempotency-Key is checked for form and otherwise not needed); 409 when the order's
 * cancellation window has closed; 404 for an unknown id or another identity's order.
 */
export function cancelOrderHandler(o: {
  orders: OrderPort;
  log: Logger;
  spend: SpendLedger;
  clock: { now(): number };
}) {
  return async function cancelOrder(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const identity = req.agent.identity;
    if (!identity) throw new Error('agent chain reached the handler without identity');
    if (parseIdempotencyKey(req.headers['idempotency-key']) === null) {
      req.agent.reason = 'idempotency: unusable Idempotency-Key';
      return sendProblem(reply, badIdempotencyKey(), req.url);
    }
    if (!ORDER_ID.test(req.params.id)) {
      req.agent.reason = 'cancel: not an order id';
      return sendProblem(reply, notFound(), req.url);
    }
    let r: CancelResult;
    try {
      r = await o.orders.cancel(req.params.id, identity.id);
    } catch (err) {
      o.log.error({ err, traceId: req.traceId }, 'order domain unavailable');
      req.agent.reason = 'order domain unavailable';
      return sendProblem(reply, domainUnavailable('the order domain'), req.url);
    }
    switch (r.kind) {
      case 'not-found':
        req.agent.reason = 'cancel: no such order for this identity';
        return sendProblem(reply, notFound(), req.url);
      case 'not-cancellable':
        req.agent.reason = 'cancel: cancellation window closed';
        return sendProblem(reply, orderNotCancellable(r.response.status), req.url);
      case 'cancelled':
        // The amount goes back to its spend period (docs/spend.md). On every cancelled
        // outcome, not only the first: release is once per order id by itself, so a retry after
        // a lost reply (or after the ledger failed here, which answers 503) still returns it.
        await o.spend.release(req.params.id, o.clock.now());
        req.agent.reason = r.first ? 'ok' : 'cancel: already cancelled';
        return reply.type('application/json').send(purchaseOrderResponseJson(r.response));
    }
  };
}
