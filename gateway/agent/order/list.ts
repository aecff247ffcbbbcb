import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import { sendProblem } from '../../../lib/problem.ts';
import { orderListJson } from '../../../subgraphs/procurement/contract/json.ts';
import { validateOrderListQuery } from '../../../subgraphs/procurement/contract/validate.ts';
import { decodeCursor } from '../../../subgraphs/procurement/domain/cursor.ts';
import { domainUnavailable, invalidQuery } from '../problems.ts';
import type { OrderListing, OrderPort } from './order-port.ts';

const isCursor = (c: string) => decodeCursor(c) !== undefined;

/**
 * GET /api/v2/procurement/orders: the caller's own orders, newest first, one page. A query
 * that breaks OrderListQuery (unknown or repeated parameter, limit outside 1–100, a cursor
 * this server did not issue) is 422 with one entry per violation.
 */
export function listOrdersHandler(o: { orders: OrderPort; log: Logger }) {
  return async function listOrders(req: FastifyRequest, reply: FastifyReply) {
    const identity = req.agent.identity;
    if (!identity) throw new Error('agent chain reached the handler without identity');
    const q = validateOrderListQuery(req.query, isCursor);
    if (!q.ok) {
      req.agent.reason = `query: ${q.errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`;
      return sendProblem(reply, invalidQuery(q.errors), req.url);
    }
    let page: OrderListing;
    try {
      page = await o.orders.list(identity.id, q.value);
    } catch (err) {
      o.log.error({ err, traceId: req.traceId }, 'order domain unavailable');
      req.agent.reason = 'order domain unavailable';
      return sendProblem(reply, domainUnavailable('the order domain'), req.url);
    }
    return reply.type('application/json').send(orderListJson(page.orders, page.nextCursor));
  };
}
