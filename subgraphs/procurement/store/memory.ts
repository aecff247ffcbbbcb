import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { OrderCursor } from '../domain/cursor.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import type { OutboxEvent } from '../outbox/order-events.ts';
import type { OrderQuery, OrderStore, OutboxStore } from './store.ts';

/** Listing order: newest first by (processed_at, order_id), as the SQL store's index. */
const before = (o: OrderCursor, c: OrderCursor) =>
  o.processedAt < c.processedAt || (o.processedAt === c.processedAt && o.orderId < c.orderId);
const newestFirst = (a: PurchaseOrder, b: PurchaseOrder) => (before(a, b) ? 1 : before(b, a) ? -1 : 0);

export const matches = (o: PurchaseOrder, q: OrderQuery): boolean =>
  (q.spiffeId === undefined || o.spiffeId === q.spiffeId) &&
  (q.agentId === undefined || o.agentId === q.agentId) &&
  (q.sku === undefined || o.sku === q.sku) &&
  (q.status === undefined || o.status === q.status) &&
  (q.placedFrom === undefined || o.processedAt >= q.placedFrom) &&
  (q.placedBefore === undefined || o.processedAt < q.placedBefore) &&
  (q.after === undefined || before(o, q.after));

/**
 * Not durable: for benchmarks of the gateway's own overhead (ORDER_STORE=memory). Keeps the
 * newest `maxOrders` so a long load run measures the checks, not a growing heap, and at most
 * `maxPending` unrelayed events (the oldest are dropped beyond it: nothing here survives a
 * restart anyway).
 */
export function memoryOrderStore(
  maxOrders = 50_000,
  maxPending = 10_000,
): OrderStore & { readonly outbox: OutboxStore } {
  const orders = new BoundedMap<string, PurchaseOrder>(maxOrders);
  let pending: OutboxEvent[] = [];
  const enqueue = (e: OutboxEvent) => {
    pending.push(e);
    if (pending.length > maxPending) pending = pending.slice(pending.length - maxPending);
  };
  let relaying = false;
  const outbox: OutboxStore = {
    async relay(limit, publish) {
      // One pass at a time, as the SQL store's row locks guarantee across relays.
      if (relaying) return { relayed: 0, full: false };
      relaying = true;
      const batch = pending.slice(0, limit);
      pending = pending.slice(batch.length);
      let relayed = 0;
      try {
        for (const e of batch) {
          await publish(e);
          relayed++;
        }
        return { relayed, full: batch.length === limit };
      } catch (error) {
        pending = [...batch.slice(relayed), ...pending];
        return { relayed, full: false, error };
      } finally {
        relaying = false;
      }
    },
    async prune() {},
  };
  return {
    outbox,
    async insert(order, event) {
      if (orders.has(order.orderId)) return;
      orders.set(order.orderId, order);
      enqueue(event);
    },
    async get(orderId) {
      return orders.get(orderId) ?? null;
    },
    async list(q) {
      const out: PurchaseOrder[] = [];
      for (const o of orders.values()) if (matches(o, q)) out.push(o);
      return out.sort(newestFirst).slice(0, q.limit);
    },
    async cancel(order, event) {
      const stored = orders.get(order.orderId);
      if (stored?.status !== 'APPROVED') return false;
      orders.set(order.orderId, order);
      enqueue(event);
      return true;
    },
  };
}
