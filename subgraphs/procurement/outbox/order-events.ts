import { randomUUID } from 'node:crypto';
import type { CloudEvent, EventTypes } from '../../../lib/events/cloudevent.ts';
import type { UsdAmount } from '../contract/types.ts';
import type { OrderStatus, PurchaseOrder } from '../domain/purchase-order.ts';

/** CloudEvents `source` of the order events, whichever process relays them. */
export const ORDER_EVENT_SOURCE = '/agent-commerce/procurement';

export type OrderEventType = typeof EventTypes.OrderPlaced | typeof EventTypes.OrderCancelled;

/**
 * `data` of OrderPlaced and OrderCancelled (schemas/events/order-*.json): the order in its REST
 * shape, snake_case, plus its owner and line. `allocated_budget` is exact decimal text: event
 * consumers in any language read it without a double in between.
 */
export interface OrderEventData {
  readonly order_id: string;
  readonly status: OrderStatus;
  readonly spiffe_id: string;
  readonly agent_id: string;
  readonly sku: string;
  readonly quantity: number;
  readonly allocated_budget: UsdAmount;
  /** Unix seconds, fractional. */
  readonly processed_at: number;
  /** Unix seconds, fractional; null for OrderPlaced. */
  readonly cancelled_at: number | null;
}

/** One outbox row: the event as stored in the order's transaction, relayed later. */
export interface OutboxEvent {
  /** The CloudEvent id: fixed when the row is written, so a re-relay carries the same id. */
  readonly id: string;
  readonly type: OrderEventType;
  readonly subject: string;
  /** ISO 8601: when the change happened (the commit's time, not the relay's). */
  readonly time: string;
  readonly data: OrderEventData;
}

export const orderEventData = (o: PurchaseOrder): OrderEventData => ({
  order_id: o.orderId,
  status: o.status,
  spiffe_id: o.spiffeId,
  agent_id: o.agentId,
  sku: o.sku,
  quantity: o.quantity,
  allocated_budget: o.allocatedBudget,
  processed_at: o.processedAt,
  cancelled_at: o.cancelledAt,
});

/** The outbox row of a change to `order` (the order as it is after the change). */
export const orderEvent = (type: OrderEventType, order: PurchaseOrder, nowMs: number): OutboxEvent => ({
  id: randomUUID(),
  type,
  subject: order.orderId,
  time: new Date(nowMs).toISOString(),
  data: orderEventData(order),
});

export const toCloudEvent = (e: OutboxEvent): CloudEvent<OrderEventData> => ({
  specversion: '1.0',
  id: e.id,
  source: ORDER_EVENT_SOURCE,
  type: e.type,
  time: e.time,
  datacontenttype: 'application/json',
  subject: e.subject,
  data: e.data,
});
