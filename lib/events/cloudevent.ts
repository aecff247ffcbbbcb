import { randomUUID } from 'node:crypto';
import { tracing } from '../telemetry/state.ts';

/** CloudEvents 1.0, structured JSON mode. */
export interface CloudEvent<T = unknown> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  datacontenttype: 'application/json';
  subject?: string;
  /**
   * CloudEvents Distributed Tracing extension: the W3C trace context of the span that published
   * the event (present when tracing is on); a consumer's span continues that trace.
   */
  traceparent?: string;
  tracestate?: string;
  data: T;
}

/** Event types of this system, reverse-DNS as CloudEvents recommends. */
export const EventTypes = {
  PriceCalculated: 'com.agent-commerce.pricing.PriceCalculated',
  BasePriceChanged: 'com.agent-commerce.pricing.BasePriceChanged',
  /** A catalog import changed or removed SKUs (data: their SKUs); caches and mirrors read them again. */
  CatalogChanged: 'com.agent-commerce.pricing.CatalogChanged',
  PromotionRulesChanged: 'com.agent-commerce.promotions.RulesChanged',
  /** An order was stored (transactional outbox, subgraphs/procurement/outbox/). */
  OrderPlaced: 'com.agent-commerce.procurement.OrderPlaced',
  /** An order was cancelled by its owner. */
  OrderCancelled: 'com.agent-commerce.procurement.OrderCancelled',
  /** An order was stored PENDING_APPROVAL: its spend policy asks a human to approve it (issue 22). */
  OrderApprovalRequested: 'com.agent-commerce.procurement.OrderApprovalRequested',
  /** A pending order received its last needed approval (it is APPROVED now). */
  OrderApproved: 'com.agent-commerce.procurement.OrderApproved',
  /** An operator rejected a pending order. */
  OrderRejected: 'com.agent-commerce.procurement.OrderRejected',
  /** A pending order got no decision in time. */
  OrderExpired: 'com.agent-commerce.procurement.OrderExpired',
  /** An operator recorded a shipment of an approved order (UCP's order events show it). */
  OrderShipped: 'com.agent-commerce.procurement.OrderShipped',
  /** An operator set or deleted a spend policy (data: its subject); processes refresh their policy index. */
  SpendPoliciesChanged: 'com.agent-commerce.procurement.SpendPoliciesChanged',
} as const;

export function cloudEvent<T>(
  source: string,
  type: string,
  data: T,
  subject?: string,
  now = new Date(),
): CloudEvent<T> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source,
    type,
    time: now.toISOString(),
    datacontenttype: 'application/json',
    ...(subject === undefined ? {} : { subject }),
    ...tracing().eventContext(),
    data,
  };
}
