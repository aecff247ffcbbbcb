/** The order search of the Orders page. */
import { toDate } from './time.ts';

export interface Order {
  orderId: string;
  status: string;
  agentId: string;
  spiffeId: string;
  sku: string;
  quantity: number;
  allocatedBudget: string | number;
  /** Unix seconds (the spec's processed_at). */
  processedAt: number | string;
}

/** The GraphQL field filters by agent; SKU and time are filtered here, over the newest 200. */
export function filterOrders(orders: Order[], f: { sku: string; since: string; until: string }): Order[] {
  const since = f.since ? Date.parse(f.since) : Number.NEGATIVE_INFINITY;
  const until = f.until ? Date.parse(f.until) : Number.POSITIVE_INFINITY;
  const sku = f.sku.trim().toUpperCase();
  return orders.filter((o) => {
    const t = toDate(o.processedAt).getTime();
    return (!sku || o.sku.toUpperCase().includes(sku)) && t >= since && t <= until;
  });
}
