import { createHash, randomUUID } from 'node:crypto';
import type { ApprovalRecord } from '../../../lib/ap2/approval-record.ts';
import type { Clock } from '../../../lib/clock.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import type { PurchaseOrderResponse } from '../contract/types.ts';
import { orderEvent } from '../outbox/order-events.ts';
import type { OrderChange, OrderQuery, OrderStore } from '../store/store.ts';
import { approvalExpired, type Decision, type DecisionRefusal, decide, expired } from './approval.ts';
import { approvalRecordOf } from './approval-record.ts';
import { cursorOf, encodeCursor, type OrderCursor } from './cursor.ts';
import {
  approve,
  cancellation,
  cancelled,
  type NewShipment,
  OrderIdConflict,
  type PlaceOrder,
  type PurchaseOrder,
  placedBy,
  shipment,
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
  /** Rejects with OrderIdConflict when `cmd.orderId` names an order placed for another request. */
  place(cmd: PlaceOrder): Promise<PurchaseOrderResponse>;
  get(orderId: string): Promise<PurchaseOrder | null>;
  /** Newest first; `q.after` resumes after a cursor of an earlier page. */
  list(q: OrderQuery): Promise<OrderPage>;
  cancel(orderId: string, spiffeId: string): Promise<CancelOutcome>;
  /** An operator's approval or rejection of a pending order (issue 22). */
  decide(orderId: string, d: Decision): Promise<DecideOutcome>;
  /** Orders awaiting approval, oldest first; `after` resumes after a cursor of an earlier page. */
  pending(q: { after?: OrderCursor; limit: number }): Promise<OrderPage>;
  /** Expires up to `limit` pending orders whose time is up; returns how many this call expired. */
  expireDue(limit: number): Promise<number>;
  /** An operator records a shipment (OrderShipped); the same tracking number again changes nothing. */
  ship(orderId: string, s: Omit<NewShipment, 'shipmentId'>): Promise<ShipOutcome>;
  /** Orders placed through this instance since start (the fuzz test's witness). */
  readonly placed: () => number;
}

/** What recording a shipment came to. */
export type ShipOutcome =
  /** `changed`: this call recorded it; false: the same tracking number was recorded before. */
  | { readonly kind: 'shipped'; readonly order: PurchaseOrder; readonly changed: boolean }
  | { readonly kind: 'not-shippable'; readonly order: PurchaseOrder; readonly reason: string }
  | { readonly kind: 'invalid'; readonly field: string; readonly reason: string }
  | { readonly kind: 'not-found' };

/** What an operator's decision came to. */
export type DecideOutcome =
  /** `changed`: this call wrote the decision; false: the same operator had taken it before. */
  | { readonly kind: 'decided'; readonly order: PurchaseOrder; readonly changed: boolean }
  | DecisionRefusal
  | { readonly kind: 'not-found' };

export interface OrderDomainOptions {
  /** How long after processed_at its owner may cancel an order (ORDER_CANCEL_WINDOW_SECONDS). */
  readonly cancelWindowMs: number;
  /** Called after each committed change (an outbox row was written): wakes the relay. */
  readonly committed?: () => void;
  /** How long a PENDING_APPROVAL order waits for a decision (ORDER_APPROVAL_TTL_SECONDS). */
  readonly approvalTtlMs?: number;
  /**
   * Gives a rejected or expired order's amount back to its spend period (the spend ledger's
   * release: once per order id, so calling it again after a lost reply is harmless).
   */
  readonly release?: (orderId: string, nowMs: number) => Promise<unknown>;
  /**
   * Called once per pending order that reached its end (approved, rejected or expired), with how
   * long it waited since it was placed: the approval decision time of docs/slos.md.
   */
  readonly decided?: (status: 'APPROVED' | 'REJECTED' | 'EXPIRED', waitedSeconds: number) => void;
  /**
   * Signs an operator's decision (the business's key ring; lib/ap2/approval-record.ts) and gives
   * the compact JWS kept with the order. Absent: decisions are kept unsigned (tests, benchmarks).
   */
  readonly signApproval?: (record: ApprovalRecord) => Promise<string>;
}

/** A day: long enough for a human to notice the request, short enough for an agent to move on. */
export const DEFAULT_APPROVAL_TTL_MS = 86_400_000;

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
  const approvalTtlMs = opts.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS;
  const release = async (orderId: string, nowMs: number) => {
    // The decision is committed; a ledger that is away leaves the amount charged (never
    // overspent) and a repeated reject, or the next sweep, does not give it back twice.
    await opts.release?.(orderId, nowMs);
  };
  const change = (
    from: PurchaseOrder,
    to: PurchaseOrder,
    actor: string,
    reason: string | null,
    nowMs: number,
  ): OrderChange => ({
    orderId: to.orderId,
    from: from.status,
    to: to.status,
    actor,
    reason,
    at: nowMs / 1000,
  });
  // The decision of an order that waited is written only with this system's signature over it
  // (issue 50): a key ring that cannot be read fails the decision, which the operator repeats.
  const signed = async (next: PurchaseOrder): Promise<PurchaseOrder> => {
    const record = opts.signApproval ? approvalRecordOf(next) : undefined;
    if (!record || !opts.signApproval) return next;
    return Object.freeze({ ...next, approvalRecord: await opts.signApproval(record) });
  };
  const EVENT_OF = {
    APPROVED: EventTypes.OrderApproved,
    REJECTED: EventTypes.OrderRejected,
    EXPIRED: EventTypes.OrderExpired,
  } as const;
  return {
    async place(cmd) {
      const now = clock.now();
      const order = approve(cmd, cmd.orderId ?? newOrderId(), now, approvalTtlMs);
      const type =
        order.status === 'PENDING_APPROVAL' ? EventTypes.OrderApprovalRequested : EventTypes.OrderPlaced;
      // Insert first: a given id is nearly always new, and the insert skips one that exists, so
      // the common case is one statement and only a repeat pays the read.
      const rehearsal = cmd.rehearsal === true;
      if (await store.insert(order, orderEvent(type, order, now), { rehearsal })) {
        // A rehearsal stored nothing: no outbox row to relay, no order to count.
        if (rehearsal) return toResponse(order);
        placed++;
        committed();
        return toResponse(order);
      }
      // The id existed: the same command again (a retry) gets its order, another one a conflict.
      const existing = await store.get(order.orderId);
      if (!existing) throw new Error(`order ${order.orderId} was neither inserted nor found`);
      if (!placedBy(existing, cmd)) throw new OrderIdConflict(order.orderId);
      return toResponse(existing);
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
        const record = change(order, next, spiffeId, 'cancelled by its agent', now);
        if (await store.cancel(next, orderEvent(EventTypes.OrderCancelled, next, now), record)) {
          committed();
          return { kind: 'cancelled', order: next, first: true };
        }
      }
      throw new Error(`order ${orderId} changed twice while being cancelled`);
    },
    async decide(orderId, d) {
      // A lost race is read back: the winner's decision is then what this one is judged against
      // (a refusal naming it, or a repeat). Under dual control two distinct approvals may both
      // land, one after the other; more than three rounds means something keeps changing it.
      for (let attempt = 0; attempt < 3; attempt++) {
        const order = await store.get(orderId);
        if (!order) return { kind: 'not-found' };
        const now = clock.now();
        const v = decide(order, d, now);
        if (v.kind === 'repeat') {
          if (order.status === 'REJECTED') await release(order.orderId, now);
          return { kind: 'decided', order, changed: false };
        }
        if (v.kind !== 'change') return v;
        const next = await signed(v.next);
        const events =
          next.status === 'PENDING_APPROVAL'
            ? []
            : [orderEvent(EVENT_OF[next.status as 'APPROVED' | 'REJECTED'], next, now)];
        const why = d.kind === 'reject' ? d.reason : d.note;
        const record = change(
          order,
          next,
          d.operator,
          next.status === 'PENDING_APPROVAL'
            ? `approval 1 of ${order.approvalsRequired}${why ? `: ${why}` : ''}`
            : why,
          now,
        );
        if (await store.transition(next, events, record)) {
          if (events.length) committed();
          if (next.status !== 'PENDING_APPROVAL')
            opts.decided?.(next.status as 'APPROVED' | 'REJECTED', now / 1000 - order.processedAt);
          if (next.status === 'REJECTED') await release(next.orderId, now);
          return { kind: 'decided', order: next, changed: true };
        }
      }
      throw new Error(`order ${orderId} changed three times while being decided`);
    },
    async pending(q) {
      const rows = await store.pending({ ...(q.after ? { after: q.after } : {}), limit: q.limit + 1 });
      const orders = rows.slice(0, q.limit);
      const last = orders[orders.length - 1];
      return { orders, nextCursor: rows.length > q.limit && last ? encodeCursor(cursorOf(last)) : null };
    },
    async expireDue(limit) {
      const now = clock.now();
      let done = 0;
      for (const order of await store.expiring(now / 1000, limit)) {
        if (!approvalExpired(order, now)) continue;
        const next = expired(order, now);
        // Another replica's sweep (or a decision) may have come first: then nothing is written.
        const record = change(order, next, 'system', next.decisionReason, now);
        if (await store.transition(next, [orderEvent(EventTypes.OrderExpired, next, now)], record)) {
          done++;
          opts.decided?.('EXPIRED', now / 1000 - order.processedAt);
          await release(next.orderId, now).catch(() => {});
        }
      }
      if (done) committed();
      return done;
    },
    async ship(orderId, s) {
      // A lost race (a decision, a cancel, another shipment) is read back and judged again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const order = await store.get(orderId);
        if (!order) return { kind: 'not-found' };
        const now = clock.now();
        const v = shipment(order, { ...s, shipmentId: newShipmentId() }, now);
        if (v.kind === 'repeat') return { kind: 'shipped', order, changed: false };
        if (v.kind === 'not-shippable') return { kind: 'not-shippable', order, reason: v.reason };
        if (v.kind === 'invalid') return v;
        const reason = `shipped ${v.shipment.lines.map((l) => `${l.quantity} of line ${l.line}`).join(', ')}, tracking ${s.trackingNumber}`;
        const record = change(order, v.next, s.operator, reason, now);
        if (await store.transition(v.next, [orderEvent(EventTypes.OrderShipped, v.next, now)], record)) {
          committed();
          return { kind: 'shipped', order: v.next, changed: true };
        }
      }
      throw new Error(`order ${orderId} changed three times while a shipment was recorded`);
    },
    placed: () => placed,
  };
}

export const newShipmentId = (): string => `shp_${randomUUID().replace(/-/g, '')}`;

export type { Decision, OrderCursor };
