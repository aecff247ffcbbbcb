import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import type { OrderStore } from './store.ts';

/**
 * Not durable: for benchmarks of the gateway's own overhead (ORDER_STORE=memory). Keeps the
 * newest `maxOrders` so a long load run measures the checks, not a growing heap.
 */
export function memoryOrderStore(maxOrders = 50_000): OrderStore {
  const orders = new BoundedMap<string, PurchaseOrder>(maxOrders);
  return {
    async insert(order) {
      if (!orders.has(order.orderId)) orders.set(order.orderId, order);
    },
    async get(orderId) {
      return orders.get(orderId) ?? null;
    },
    async list({ agentId, limit }) {
      const out: PurchaseOrder[] = [];
      const all = [...orders.values()];
      for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
        const o = all[i] as PurchaseOrder;
        if (agentId === undefined || o.agentId === agentId) out.push(o);
      }
      return out;
    },
  };
}
