import { decodeCursor } from '../../../subgraphs/procurement/domain/cursor.ts';
import type { CancelOutcome, OrderDomain } from '../../../subgraphs/procurement/domain/order-domain.ts';
import {
  InvalidPlaceOrder,
  OrderIdConflict,
  toResponse,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import { type CancelResult, DomainUnavailable, type OrderPort } from './order-port.ts';

/** The domain's cancel outcome as the gateway answers it (shared with the HTTP adapter). */
export function cancelResult(r: CancelOutcome): CancelResult {
  if (r.kind === 'not-found') return r;
  if (r.kind === 'not-cancellable') return { kind: r.kind, response: toResponse(r.order) };
  return { kind: r.kind, response: toResponse(r.order), first: r.first };
}

const unavailable = (err: unknown) =>
  new DomainUnavailable(err instanceof Error ? err.message : 'order store failed');

/** Embedded topology: the procurement module's domain, called directly. */
export function inProcessOrders(domain: OrderDomain): OrderPort {
  return {
    async place(cmd) {
      try {
        return await domain.place(cmd);
      } catch (err) {
        // Both are the caller's: nothing was stored, and asking again would not change that.
        if (err instanceof OrderIdConflict || err instanceof InvalidPlaceOrder) throw err;
        // A failed write of the embedded or SQL store rolls back: no order exists.
        throw new DomainUnavailable(err instanceof Error ? err.message : 'order store failed', true);
      }
    },
    async get(orderId) {
      const o = await domain.get(orderId);
      return o
        ? {
            spiffeId: o.spiffeId,
            response: toResponse(o),
            checkoutSessionId: o.checkoutSessionId ?? null,
            order: o,
          }
        : null;
    },
    async list(spiffeId, { limit, cursor }) {
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (cursor !== undefined && !after)
        throw new DomainUnavailable('the gateway passed an unchecked cursor');
      try {
        const page = await domain.list({ spiffeId, limit, ...(after ? { after } : {}) });
        return { orders: page.orders.map(toResponse), nextCursor: page.nextCursor };
      } catch (err) {
        throw unavailable(err);
      }
    },
    async cancel(orderId, spiffeId) {
      try {
        return cancelResult(await domain.cancel(orderId, spiffeId));
      } catch (err) {
        throw unavailable(err);
      }
    },
  };
}
