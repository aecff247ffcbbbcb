import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../../../lib/clock.ts';
import type { PurchaseOrderResponse } from '../contract/types.ts';
import type { OrderQuery, OrderStore } from '../store/store.ts';
import { approve, type PlaceOrder, type PurchaseOrder, toResponse } from './purchase-order.ts';

/**
 * The order domain service: what the gateway calls (in process when embedded, over HTTP when
 * distributed) and what the GraphQL resolvers read. `place` resolves only after the order is
 * durably stored; when the store fails it rejects and nothing was stored.
 */
export interface OrderDomain {
  place(cmd: PlaceOrder): Promise<PurchaseOrderResponse>;
  get(orderId: string): Promise<PurchaseOrder | null>;
  list(q: OrderQuery): Promise<PurchaseOrder[]>;
  /** Orders placed through this instance since start (the fuzz test's witness). */
  readonly placed: () => number;
}

export const newOrderId = (): string => `ord_${randomUUID().replace(/-/g, '')}`;

/** The order id of an idempotency record (identity-scoped key): the same key, the same order. */
export const orderIdFor = (idempotencyRecordKey: string): string =>
  `ord_${createHash('sha256').update('order\0').update(idempotencyRecordKey).digest('hex').slice(0, 32)}`;

export function createOrderDomain(store: OrderStore, clock: Clock): OrderDomain {
  let placed = 0;
  return {
    async place(cmd) {
      if (cmd.orderId) {
        const existing = await store.get(cmd.orderId);
        if (existing) return toResponse(existing);
      }
      const order = approve(cmd, cmd.orderId ?? newOrderId(), clock.now());
      placed++;
      await store.insert(order);
      return toResponse(order);
    },
    get: (orderId) => store.get(orderId),
    list: (q) => store.list(q),
    placed: () => placed,
  };
}
