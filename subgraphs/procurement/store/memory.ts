import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { OrderCursor } from '../domain/cursor.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import type { OutboxEvent } from '../outbox/order-events.ts';
import type { OrderChange, OrderQuery, OrderStore, OutboxStore } from './store.ts';

/** Listing order: newest first by (processed_at, order_id), as the SQL store's index. */
const before = (o: OrderCursor, c: OrderCursor) =>
  o.processedAt < c.processedAt || (o.processedAt === c.processedAt && o.orderId < c.orderId);
const newestFirst = (a: PurchaseOrder, b: PurchaseOrder) => (before(a, b) ? 1 : before(b, a) ? -1 : 0);

export const matches = (o: PurchaseOrder, q: OrderQuery): boolean =>
  (q.spiffeId === undefined || o.spiffeId === q.spiffeId) &&
  (q.agentId === undefined || o.agentId === q.agentId) &&
  (q.sku === undefined || o.sku === q.sku || (o.lines?.some((l) => l.sku === q.sku) ?? false)) &&
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
  const changes = new BoundedMap<string, OrderChange[]>(maxOrders);
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
    async insert(order, event, o) {
      if (orders.has(order.orderId)) return false;
      if (o?.rehearsal) return true;
      orders.set(order.orderId, order);
      enqueue(event);
      return true;
    },
    async get(orderId) {
      return orders.get(orderId) ?? null;
    },
    async list(q) {
      const out: PurchaseOrder[] = [];
      for (const o of orders.values()) if (matches(o, q)) out.push(o);
      return out.sort(newestFirst).slice(0, q.limit);
    },
    cancel: async (order, event, change) => transition(order, [event], change),
    transition: async (next, events, change) => transition(next, events, change),
    async pending(q) {
      const oldestFirst = (a: PurchaseOrder, b: PurchaseOrder) => newestFirst(b, a);
      const after = q.after;
      return [...orders.values()]
        .filter((o) => o.status === 'PENDING_APPROVAL' && (!after || before(after, o)))
        .sort(oldestFirst)
        .slice(0, q.limit);
    },
    async pendingSummary() {
      const waiting = [...orders.values()].filter((o) => o.status === 'PENDING_APPROVAL');
      return {
        count: waiting.length,
        oldestProcessedAt: waiting.length ? Math.min(...waiting.map((o) => o.processedAt)) : null,
      };
    },
    async expiring(nowSeconds, limit) {
      return [...orders.values()]
        .filter((o) => o.status === 'PENDING_APPROVAL' && o.expiresAt !== null && o.expiresAt <= nowSeconds)
        .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0))
        .slice(0, limit);
    },
    async changes(orderId) {
      return [...(changes.get(orderId) ?? [])];
    },
  };

  /** Synchronous between read and write: atomic on the event loop, as the SQL row lock is. */
  function transition(next: PurchaseOrder, events: readonly OutboxEvent[], change?: OrderChange) {
    const stored = orders.get(next.orderId);
    if (stored?.version !== next.version - 1) return false;
    orders.set(next.orderId, next);
    for (const e of events) enqueue(e);
    if (change) changes.set(next.orderId, [...(changes.get(next.orderId) ?? []), change]);
    return true;
  }
}
