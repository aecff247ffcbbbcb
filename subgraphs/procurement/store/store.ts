import type { PurchaseOrder } from '../domain/purchase-order.ts';

export interface OrderQuery {
  readonly agentId?: string;
  readonly limit: number;
}

/** Durable orders: the SQL store (PGlite or Postgres via platform.db), or memory (benchmarks). */
export interface OrderStore {
  /** Resolves once the order is committed. */
  insert(order: PurchaseOrder): Promise<void>;
  get(orderId: string): Promise<PurchaseOrder | null>;
  /** Newest first. */
  list(q: OrderQuery): Promise<PurchaseOrder[]>;
}
