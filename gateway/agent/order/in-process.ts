import type { OrderDomain } from '../../../subgraphs/procurement/domain/order-domain.ts';
import { toResponse } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import { DomainUnavailable, type OrderPort } from './order-port.ts';

/** Embedded topology: the procurement module's domain, called directly. */
export function inProcessOrders(domain: OrderDomain): OrderPort {
  return {
    async place(cmd) {
      try {
        return await domain.place(cmd);
      } catch (err) {
        // A failed write of the embedded or SQL store rolls back: no order exists.
        throw new DomainUnavailable(err instanceof Error ? err.message : 'order store failed', true);
      }
    },
    async get(orderId) {
      const o = await domain.get(orderId);
      return o ? { spiffeId: o.spiffeId, response: toResponse(o) } : null;
    },
  };
}
