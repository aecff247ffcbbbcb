import { randomUUID } from 'node:crypto';

/** CloudEvents 1.0, structured JSON mode. */
export interface CloudEvent<T = unknown> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  datacontenttype: 'application/json';
  subject?: string;
  data: T;
}

/** Event types of this system, reverse-DNS as CloudEvents recommends. */
export const EventTypes = {
  PriceCalculated: 'com.agent-commerce.pricing.PriceCalculated',
  BasePriceChanged: 'com.agent-commerce.pricing.BasePriceChanged',
  PromotionRulesChanged: 'com.agent-commerce.promotions.RulesChanged',
  /** An order was stored (transactional outbox, subgraphs/procurement/outbox/). */
  OrderPlaced: 'com.agent-commerce.procurement.OrderPlaced',
  /** An order was cancelled by its owner. */
  OrderCancelled: 'com.agent-commerce.procurement.OrderCancelled',
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
    data,
  };
}
