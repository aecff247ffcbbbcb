import { groupCommit } from '../../../lib/db/group-commit.ts';
import type { Db, Queryable } from '../../../lib/db/index.ts';
import { rehearse } from '../../../lib/db/rehearse.ts';
import { vacuumAfterChanges } from '../../../lib/db/upkeep.ts';
import type { OrderStatus, PurchaseOrder } from '../domain/purchase-order.ts';
import type { OutboxEvent } from '../outbox/order-events.ts';
import { fromRow, type Row, storedLine } from './order-rows.ts';
import type { OrderChange, OrderQuery, OrderStore, OutboxStore } from './store.ts';

/** The change record of one transaction. */
async function writeChange(tx: Queryable, c: OrderChange): Promise<void> {
  await tx.query(
    'INSERT INTO purchase_order_changes (order_id, from_status, to_status, actor, reason, at) VALUES ($1,$2,$3,$4,$5,$6)',
    [c.orderId, c.from, c.to, c.actor, c.reason, c.at],
  );
}

/** `v` as the next parameter of a statement: pushed onto `params`, its placeholder returned. */
function param(params: unknown[], v: unknown): string {
  params.push(v);
  return `$${params.length}`;
}

/** The outbox's columns, and each one's type for a parameter in a VALUES list. */
const OUTBOX_COLUMNS = 'event_id, type, subject, time, data, traceparent, tracestate';
const OUTBOX_TYPES = ['text', 'text', 'text', 'text', 'jsonb', 'text', 'text'] as const;

/**
 * An outbox row as a VALUES tuple of parameters (pushed onto `params`), in OUTBOX_COLUMNS'
 * order; `first` are values put before it (cast by the caller).
 */
function outboxTuple(e: OutboxEvent, params: unknown[], first: string[] = []): string {
  const values = [
    e.id,
    e.type,
    e.subject,
    e.time,
    JSON.stringify(e.data),
    e.traceparent ?? null,
    e.tracestate ?? null,
  ];
  const cast = values.map((v, i) => `${param(params, v)}::${OUTBOX_TYPES[i]}`);
  return `(${[...first, ...cast].join(', ')})`;
}

/** Outbox rows of one transaction, as one multi-row INSERT. */
async function writeEvents(tx: Queryable, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const params: unknown[] = [];
  const values = events.map((e) => outboxTuple(e, params));
  await tx.query(`INSERT INTO procurement_outbox (${OUTBOX_COLUMNS}) VALUES ${values.join(',')}`, params);
}

const SELECT =
  'SELECT order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget::text AS allocated_budget, processed_at, cancelled_at, trace_id, approvals_required, approvals, expires_at, decided_at, decided_by, decision_reason, version, lines, total, checkout_session_id, shipments, buyer_consent, approval_policy, approval_record FROM purchase_orders';

/** The WHERE clause of a listing; every value a parameter. */
function where(q: OrderQuery, params: unknown[]): string {
  const terms: string[] = [];
  const p = (v: unknown) => param(params, v);
  if (q.spiffeId !== undefined) terms.push(`spiffe_id = ${p(q.spiffeId)}`);
  if (q.agentId !== undefined) terms.push(`agent_id = ${p(q.agentId)}`);
  // A checkout order matches on any of its lines' SKUs (its `sku` column is the first line's).
  if (q.sku !== undefined) {
    const sku = p(q.sku);
    terms.push(`(sku = ${sku} OR lines @> jsonb_build_array(jsonb_build_object('sku', ${sku}::text)))`);
  }
  if (q.status !== undefined) terms.push(`status = ${p(q.status)}`);
  if (q.placedFrom !== undefined) terms.push(`processed_at >= ${p(q.placedFrom)}`);
  if (q.placedBefore !== undefined) terms.push(`processed_at < ${p(q.placedBefore)}`);
  // Row comparison: the index (…, processed_at DESC, order_id DESC) serves it as one range.
  if (q.after !== undefined)
    terms.push(`(processed_at, order_id) < (${p(q.after.processedAt)}, ${p(q.after.orderId)})`);
  return terms.length ? ` WHERE ${terms.join(' AND ')}` : '';
}

/** An order with its outbox row, as a batch of the group commit writes them. */
type Placed = { order: PurchaseOrder; event: OutboxEvent };

/**
 * Inserts a batch of orders and their outbox rows through `q` (the store, or a transaction that a
 * rehearsal rolls back): true for each item whose order this statement created.
 */
async function insertOrders(q: Queryable, batch: readonly Placed[]): Promise<boolean[]> {
  const params: unknown[] = [];
  const p = (v: unknown) => param(params, v);
  const orders = batch.map(({ order: o }) => {
    const row = [
      o.orderId,
      o.status,
      o.agentId,
      o.spiffeId,
      o.sku,
      o.quantity,
      o.allocatedBudget, // decimal text into numeric: exact
      o.processedAt,
      o.cancelledAt,
      o.traceId,
      o.approvalsRequired,
      JSON.stringify(o.approvals),
      o.expiresAt,
      o.lines === null ? null : JSON.stringify(o.lines.map(storedLine)),
      o.total,
      o.checkoutSessionId,
      o.buyerConsent ? JSON.stringify(o.buyerConsent) : null,
      o.approvalPolicy ? JSON.stringify(o.approvalPolicy) : null,
    ];
    return `(${row.map(p).join(',')})`;
  });
  // `n` (the batch position, ours) keeps the events in the batch's order in the outbox.
  const events = batch.map(({ order, event }, n) =>
    outboxTuple(event, params, [String(n), `${p(order.orderId)}::text`]),
  );
  // One statement, atomic by itself: the orders and their outbox rows in one round trip
  // (a transaction took four: BEGIN, two INSERTs, COMMIT; each a message to the embedded
  // store's thread, or a trip to Postgres). `created` names only the orders this statement
  // inserted: an id that existed (a retried Idempotency-Key, a resumed completion) gets no
  // second OrderPlaced, and an id twice in one batch gets one, its first item's (VALUES
  // are inserted in order). The outbox insert runs to completion though the statement
  // returns only `created`.
  const rows = await q.query<{ order_id: string }>(
    `WITH created AS (
        INSERT INTO purchase_orders (order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget, processed_at, cancelled_at, trace_id, approvals_required, approvals, expires_at, lines, total, checkout_session_id, buyer_consent, approval_policy)
        VALUES ${orders.join(',')} ON CONFLICT (order_id) DO NOTHING RETURNING order_id
      ), events (n, order_id, ${OUTBOX_COLUMNS}) AS (
        VALUES ${events.join(',')}
      ), outboxed AS (
        INSERT INTO procurement_outbox (${OUTBOX_COLUMNS})
        SELECT ${OUTBOX_COLUMNS} FROM (
          SELECT DISTINCT ON (order_id) * FROM events JOIN created USING (order_id) ORDER BY order_id, n
        ) first_event ORDER BY n
      )
      SELECT order_id FROM created`,
    params,
  );
  // Each created id answers true once: to the first item of the batch that carries it.
  const created = new Set(rows.map((r) => r.order_id));
  return batch.map(({ order }) => created.delete(order.orderId));
}

/**
 * Orders in the SQL store (PGlite embedded, Postgres with DATABASE_URL). Every change writes
 * its outbox row in the same transaction.
 */
export function sqlOrderStore(db: Db): OrderStore {
  const insertBatch = groupCommit<Placed, boolean>((batch) => insertOrders(db, batch), {
    // One batch at a time measured as well as several on Postgres here (the commit's fsync
    // dominates); the embedded store has a single connection anyway.
    concurrency: 1,
  });
  // The warm-up's orders (issue 48): the same statement, batched the same way (so the statement
  // texts of several batch sizes are prepared), in a transaction that is rolled back.
  const rehearseBatch = groupCommit<Placed, boolean>(
    (batch) => rehearse(db, (tx) => insertOrders(tx, batch)),
    { concurrency: 1 },
  );
  return {
    insert: (order, event, o) => (o?.rehearsal ? rehearseBatch : insertBatch)({ order, event }),
    async get(orderId) {
      const rows = await db.query<Row>(`${SELECT} WHERE order_id = $1`, [orderId]);
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async list(q) {
      const params: unknown[] = [];
      const sql = `${SELECT}${where(q, params)} ORDER BY processed_at DESC, order_id DESC LIMIT $${params.length + 1}`;
      params.push(q.limit);
      return (await db.query<Row>(sql, params)).map(fromRow);
    },
    cancel: (order, event, change) => transition(order, [event], change),
    transition: (next, events, change) => transition(next, events, change),
    async pending(q) {
      const params: unknown[] = [];
      let after = '';
      if (q.after) {
        params.push(q.after.processedAt, q.after.orderId);
        after = ' AND (processed_at, order_id) > ($1, $2)';
      }
      params.push(q.limit);
      const sql = `${SELECT} WHERE status = 'PENDING_APPROVAL'${after} ORDER BY processed_at, order_id LIMIT $${params.length}`;
      return (await db.query<Row>(sql, params)).map(fromRow);
    },
    async pendingSummary() {
      // The partial index purchase_orders_pending holds exactly these rows.
      const [row] = await db.query<{ n: number | string; oldest: number | string | null }>(
        "SELECT count(*) AS n, min(processed_at) AS oldest FROM purchase_orders WHERE status = 'PENDING_APPROVAL'",
      );
      return {
        count: Number(row?.n ?? 0),
        oldestProcessedAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
      };
    },
    async expiring(nowSeconds, limit) {
      const sql = `${SELECT} WHERE status = 'PENDING_APPROVAL' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`;
      return (await db.query<Row>(sql, [nowSeconds, limit])).map(fromRow);
    },
    async changes(orderId) {
      const rows = await db.query<{
        order_id: string;
        from_status: OrderStatus;
        to_status: OrderStatus;
        actor: string;
        reason: string | null;
        at: number;
      }>(
        'SELECT order_id, from_status, to_status, actor, reason, at FROM purchase_order_changes WHERE order_id = $1 ORDER BY seq',
        [orderId],
      );
      return rows.map((r) => ({
        orderId: r.order_id,
        from: r.from_status,
        to: r.to_status,
        actor: r.actor,
        reason: r.reason,
        at: Number(r.at),
      }));
    },
  };

  /**
   * One change over the version it was computed from. The row lock taken by the UPDATE orders
   * concurrent changes (two operators, an operator and the agent's cancel, the expiry sweep of
   * two replicas): the later one finds another version, updates nothing and writes no event.
   */
  function transition(next: PurchaseOrder, events: readonly OutboxEvent[], change?: OrderChange) {
    return db.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE purchase_orders SET status = $2, cancelled_at = $3, approvals = $4::jsonb, decided_at = $5,
           decided_by = $6, decision_reason = $7, version = $8, shipments = $10::jsonb,
           approval_record = $11
         WHERE order_id = $1 AND version = $9 RETURNING order_id`,
        [
          next.orderId,
          next.status,
          next.cancelledAt,
          JSON.stringify(next.approvals),
          next.decidedAt,
          next.decidedBy,
          next.decisionReason,
          next.version,
          next.version - 1,
          JSON.stringify(next.shipments ?? []),
          next.approvalRecord ?? null,
        ],
      );
      if (rows.length === 0) return false;
      await writeEvents(tx, events);
      if (change) await writeChange(tx, change);
      return true;
    });
  }
}

interface OutboxRow {
  seq: string;
  event_id: string;
  type: OutboxEvent['type'];
  subject: string;
  time: string;
  data: OutboxEvent['data'];
  traceparent: string | null;
  tracestate: string | null;
}

/**
 * The outbox in the SQL store. `FOR UPDATE SKIP LOCKED`: on Postgres, relays in several
 * procurement replicas each take rows no other holds, so no row is relayed by two at once;
 * PGlite (one process, one connection) runs the same SQL.
 */
export function sqlOutbox(db: Db): OutboxStore {
  // Each relayed row leaves a dead version: on PGlite the claim below would read them all.
  const relayed = vacuumAfterChanges(db, 'procurement_outbox');
  return {
    relay: async (limit, publish) => {
      const pass = await db.transaction(async (tx) => {
        // ORDER BY the table's bigint column, not the text alias: "10" sorts before "9". By the
        // column, the planner also walks the partial index in order and stops at the limit.
        const rows = await tx.query<OutboxRow>(
          'SELECT seq::text AS seq, event_id, type, subject, time, data, traceparent, tracestate FROM procurement_outbox WHERE relayed_at IS NULL ORDER BY procurement_outbox.seq LIMIT $1 FOR UPDATE SKIP LOCKED',
          [limit],
        );
        const done: string[] = [];
        let error: unknown;
        for (const r of rows) {
          try {
            await publish({
              id: r.event_id,
              type: r.type,
              subject: r.subject,
              time: r.time,
              data: r.data,
              ...(r.traceparent ? { traceparent: r.traceparent } : {}),
              ...(r.tracestate ? { tracestate: r.tracestate } : {}),
            });
          } catch (err) {
            error = err ?? new Error('publish failed');
            break;
          }
          done.push(r.seq);
        }
        if (done.length)
          await tx.query('UPDATE procurement_outbox SET relayed_at = now() WHERE seq = ANY($1::bigint[])', [
            done,
          ]);
        return {
          relayed: done.length,
          full: rows.length === limit && error === undefined,
          ...(error === undefined ? {} : { error }),
        };
      });
      await relayed(pass.relayed);
      return pass;
    },
    async prune(beforeMs) {
      await db.query('DELETE FROM procurement_outbox WHERE relayed_at IS NOT NULL AND relayed_at < $1', [
        new Date(beforeMs).toISOString(),
      ]);
      // A prune may delete a week of rows (hourly): vacuum after it whatever the count.
      await relayed(Number.POSITIVE_INFINITY);
    },
  };
}
