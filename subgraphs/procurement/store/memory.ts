import type { PurchaseOrder } from '../domain/purchase-order.ts';
import type { OrderStore } from './store.ts';

/** Not durable: for benchmarks of the gateway's own overhead (ORDER_STORE=memory). */
export function memoryOrderStore(): OrderStore {
  const orders = new Map<string, PurchaseOrder>();
  return {
    async insert(order) {
      orders.set(order.orderId, order);
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
