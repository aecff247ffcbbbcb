import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../../../lib/clock.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import type { PurchaseOrderResponse } from '../contract/types.ts';
import { orderEvent } from '../outbox/order-events.ts';
import type { OrderQuery, OrderStore } from '../store/store.ts';
import { cursorOf, encodeCursor, type OrderCursor } from './cursor.ts';
import {
  approve,
  cancellation,
  cancelled,
  type PlaceOrder,
  type PurchaseOrder,
  toResponse,
} from './purchase-order.ts';

/** One page of a listing; `nextCursor` null on the last page. */
export interface OrderPage {
  readonly orders: readonly PurchaseOrder[];
  readonly nextCursor: string | null;
}

/** What a cancel request came to (docs/procurement.md, "Order lifecycle"). */
export type CancelOutcome =
  /** `first`: this call cancelled it (an OrderCancelled was written); false: it already was. */
  | { readonly kind: 'cancelled'; readonly order: PurchaseOrder; readonly first: boolean }
  | { readonly kind: 'not-cancellable'; readonly order: PurchaseOrder }
  /** No such order, or another identity's: the caller cannot tell which. */
  | { readonly kind: 'not-found' };

/**
 * The order domain service: what the gateway calls (in process when embedded, over HTTP when
 * distributed) and what the GraphQL resolvers read. `place` resolves only after the order is
 * durably stored; when the store fails it rejects and nothing was stored. Ownership is decided
 * here, by the SPIFFE ID that placed the order.
 */
export interface OrderDomain {
  place(cmd: PlaceOrder): Promise<PurchaseOrderResponse>;
  get(orderId: string): Promise<PurchaseOrder | null>;
  /** Newest first; `q.after` resumes after a cursor of an earlier page. */
  list(q: OrderQuery): Promise<OrderPage>;
  cancel(orderId: string, spiffeId: string): Promise<CancelOutcome>;
  /** Orders placed through this instance since start (the fuzz test's witness). */
  readonly placed: () => number;
}

export interface OrderDomainOptions {
  /** How long after processed_at its owner may cancel an order (ORDER_CANCEL_WINDOW_SECONDS). */
  readonly cancelWindowMs: number;
  /** Called after each committed change (an outbox row was written): wakes the relay. */
  readonly committed?: () => void;
}

/** One hour: long enough for an agent to notice a mistake, short enough for fulfilment to start. */
export const DEFAULT_CANCEL_WINDOW_MS = 3_600_000;

export const newOrderId = (): string => `ord_${randomUUID().replace(/-/g, '')}`;

/** The order id of an idempotency record (identity-scoped key): the same key, the same order. */
export const orderIdFor = (idempotencyRecordKey: string): string =>
  `ord_${createHash('sha256').update('order\0').update(idempotencyRecordKey).digest('hex').slice(0, 32)}`;

export function createOrderDomain(
  store: OrderStore,
  clock: Clock,
  opts: OrderDomainOptions = { cancelWindowMs: DEFAULT_CANCEL_WINDOW_MS },
): OrderDomain {
  let placed = 0;
  const committed = opts.committed ?? (() => {});
  return {
    async place(cmd) {
      if (cmd.orderId) {
        const existing = await store.get(cmd.orderId);
        if (existing) return toResponse(existing);
      }
      const now = clock.now();
      const order = approve(cmd, cmd.orderId ?? newOrderId(), now);
      placed++;
      await store.insert(order, orderEvent(EventTypes.OrderPlaced, order, now));
      committed();
      return toResponse(order);
    },
    get: (orderId) => store.get(orderId),
    async list(q) {
      // One more than asked: whether a next page exists, without a count query.
      const rows = await store.list({ ...q, limit: q.limit + 1 });
      const orders = rows.slice(0, q.limit);
      const last = orders[orders.length - 1];
      return { orders, nextCursor: rows.length > q.limit && last ? encodeCursor(cursorOf(last)) : null };
    },
    async cancel(orderId, spiffeId) {
      // Twice at most: a lost race with a concurrent cancel is read back as "already".
      for (let attempt = 0; attempt < 2; attempt++) {
        const order = await store.get(orderId);
        if (!order || order.spiffeId !== spiffeId) return { kind: 'not-found' };
        const now = clock.now();
        const verdict = cancellation(order, now, opts.cancelWindowMs);
        if (verdict === 'already') return { kind: 'cancelled', order, first: false };
        if (verdict === 'too-late') return { kind: 'not-cancellable', order };
        const next = cancelled(order, now);
        if (await store.cancel(next, orderEvent(EventTypes.OrderCancelled, next, now))) {
          committed();
          return { kind: 'cancelled', order: next, first: true };
        }
      }
      throw new Error(`order ${orderId} changed twice while being cancelled`);
    },
    placed: () => placed,
  };
}

export type { OrderCursor };
