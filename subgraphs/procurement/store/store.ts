import type { OrderCursor } from '../domain/cursor.ts';
import type { OrderStatus, PurchaseOrder } from '../domain/purchase-order.ts';
import type { OutboxEvent } from '../outbox/order-events.ts';

/** Filters of a listing; all optional but the limit. Newest first by (processed_at, order_id). */
export interface OrderQuery {
  /** The owner (the agent's own list always sets it). */
  readonly spiffeId?: string;
  readonly agentId?: string;
  readonly sku?: string;
  readonly status?: OrderStatus;
  /** processed_at ≥ this (Unix seconds). */
  readonly placedFrom?: number;
  /** processed_at < this (Unix seconds). */
  readonly placedBefore?: number;
  /** Only orders strictly after this one in the listing order. */
  readonly after?: OrderCursor;
  readonly limit: number;
}

/** Durable orders: the SQL store (PGlite or Postgres via platform.db), or memory (benchmarks). */
export interface OrderStore {
  /**
   * Resolves true once the order and its OrderPlaced outbox row are committed, together; false
   * when the order id exists already (nothing is written: the stored order is left as it is
   * and its event is not written again). `rehearsal` (the warm-up's orders, issue 48): the same
   * statements run in a transaction that is rolled back, and the answer is what a commit would
   * have said; nothing is stored.
   */
  insert(order: PurchaseOrder, event: OutboxEvent, o?: { readonly rehearsal?: boolean }): Promise<boolean>;
  get(orderId: string): Promise<PurchaseOrder | null>;
  list(q: OrderQuery): Promise<PurchaseOrder[]>;
  /**
   * Stores `order` (CANCELLED) and its OrderCancelled outbox row in one transaction if the
   * stored order is still the version it was cancelled from; false (and nothing written) when not.
   */
  cancel(order: PurchaseOrder, event: OutboxEvent, change?: OrderChange): Promise<boolean>;
  /**
   * Writes `next` (its status, approvals and decision) with its outbox rows and its change
   * record in one transaction, only if the stored order is still at version `next.version - 1`;
   * false (nothing written) when another change came first.
   */
  transition(next: PurchaseOrder, events: readonly OutboxEvent[], change: OrderChange): Promise<boolean>;
  /** Orders awaiting approval, oldest first by (processed_at, order_id), after `after`. */
  pending(q: { readonly after?: OrderCursor; readonly limit: number }): Promise<PurchaseOrder[]>;
  /** How many orders wait for approval and when the oldest of them was placed (the metrics). */
  pendingSummary(): Promise<PendingSummary>;
  /** Orders still PENDING_APPROVAL whose expiry is at or before `nowSeconds`, soonest first. */
  expiring(nowSeconds: number, limit: number): Promise<PurchaseOrder[]>;
  /** The change records of one order, oldest first. */
  changes(orderId: string): Promise<OrderChange[]>;
}

export interface PendingSummary {
  readonly count: number;
  /** processed_at of the oldest order awaiting approval (Unix seconds); null when none waits. */
  readonly oldestProcessedAt: number | null;
}

/** One change of an order after its creation (the procurement audit of issue 22). */
export interface OrderChange {
  readonly orderId: string;
  readonly from: OrderStatus;
  readonly to: OrderStatus;
  /** The operator (token subject), the agent's SPIFFE ID for a cancel, or `system` for an expiry. */
  readonly actor: string;
  readonly reason: string | null;
  /** Unix seconds. */
  readonly at: number;
}

/** The outcome of one relay pass over the outbox. */
export interface RelayPass {
  /** Rows published and marked relayed. */
  readonly relayed: number;
  /** The batch was full: more rows may be waiting. */
  readonly full: boolean;
  /** Set when publishing failed: the row it failed on and those after it stay unrelayed. */
  readonly error?: unknown;
}

/** The transactional outbox of order events. */
export interface OutboxStore {
  /**
   * Claims up to `limit` unrelayed rows, oldest first, that no other relay holds, publishes
   * them in order and marks the published ones relayed, in one transaction: a relay that dies
   * before the mark leaves them unrelayed for the next pass (published again, same ids).
   */
  relay(limit: number, publish: (event: OutboxEvent) => Promise<void>): Promise<RelayPass>;
  /** Forgets relayed rows older than `beforeMs` (bounds the table). */
  prune(beforeMs: number): Promise<void>;
}
