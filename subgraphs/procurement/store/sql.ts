import type { Db, Queryable } from '../../../lib/db/index.ts';
import { usdAmount } from '../contract/json.ts';
import type { OrderStatus, PurchaseOrder } from '../domain/purchase-order.ts';
import type { OutboxEvent } from '../outbox/order-events.ts';
import { groupCommit } from './group-commit.ts';
import type { OrderQuery, OrderStore, OutboxStore } from './store.ts';

const COLUMNS = 10;

interface Row {
  order_id: string;
  status: OrderStatus;
  agent_id: string;
  spiffe_id: string;
  sku: string;
  quantity: number;
  /** numeric, selected as text: the exact decimal. */
  allocated_budget: string;
  processed_at: number;
  cancelled_at: number | null;
  trace_id: string;
}

function exactBudget(r: Row) {
  const amount = usdAmount(r.allocated_budget);
  // The CHECK constraints make this unreachable for rows this code wrote.
  if (amount === undefined) throw new Error(`order ${r.order_id} has a stored budget that is not an amount`);
  return amount;
}

const fromRow = (r: Row): PurchaseOrder =>
  Object.freeze({
    orderId: r.order_id,
    status: r.status,
    agentId: r.agent_id,
    spiffeId: r.spiffe_id,
    sku: r.sku,
    quantity: Number(r.quantity),
    allocatedBudget: exactBudget(r),
    processedAt: Number(r.processed_at),
    cancelledAt: r.cancelled_at === null ? null : Number(r.cancelled_at),
    traceId: r.trace_id,
  });

/** Outbox rows of one transaction, as one multi-row INSERT. */
async function writeEvents(tx: Queryable, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const values: string[] = [];
  const params: unknown[] = [];
  for (const e of events) {
    const b = params.length;
    values.push(`($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5}::jsonb)`);
    params.push(e.id, e.type, e.subject, e.time, JSON.stringify(e.data));
  }
  await tx.query(
    `INSERT INTO procurement_outbox (event_id, type, subject, time, data) VALUES ${values.join(',')}`,
    params,
  );
}

const SELECT =
  'SELECT order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget::text AS allocated_budget, processed_at, cancelled_at, trace_id FROM purchase_orders';

/** The WHERE clause of a listing; every value a parameter. */
function where(q: OrderQuery, params: unknown[]): string {
  const terms: string[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (q.spiffeId !== undefined) terms.push(`spiffe_id = ${param(q.spiffeId)}`);
  if (q.agentId !== undefined) terms.push(`agent_id = ${param(q.agentId)}`);
  if (q.sku !== undefined) terms.push(`sku = ${param(q.sku)}`);
  if (q.status !== undefined) terms.push(`status = ${param(q.status)}`);
  if (q.placedFrom !== undefined) terms.push(`processed_at >= ${param(q.placedFrom)}`);
  if (q.placedBefore !== undefined) terms.push(`processed_at < ${param(q.placedBefore)}`);
  // Row comparison: the index (…, processed_at DESC, order_id DESC) serves it as one range.
  if (q.after !== undefined)
    terms.push(`(processed_at, order_id) < (${param(q.after.processedAt)}, ${param(q.after.orderId)})`);
  return terms.length ? ` WHERE ${terms.join(' AND ')}` : '';
}

/**
 * Orders in the SQL store (PGlite embedded, Postgres with DATABASE_URL). Every change writes
 * its outbox row in the same transaction.
 */
export function sqlOrderStore(db: Db): OrderStore {
  const insertBatch = groupCommit<{ order: PurchaseOrder; event: OutboxEvent }>(
    async (batch) => {
      const values: string[] = [];
      const params: unknown[] = [];
      for (const { order: o } of batch) {
        const b = params.length;
        values.push(`(${Array.from({ length: COLUMNS }, (_, i) => `$${b + i + 1}`).join(',')})`);
        params.push(
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
        );
      }
      await db.transaction(async (tx) => {
        // RETURNING names only the orders this statement created: an id that existed (a
        // retried Idempotency-Key) gets no second OrderPlaced.
        const created = await tx.query<{ order_id: string }>(
          `INSERT INTO purchase_orders (order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget, processed_at, cancelled_at, trace_id) VALUES ${values.join(',')} ON CONFLICT (order_id) DO NOTHING RETURNING order_id`,
          params,
        );
        const ids = new Set(created.map((r) => r.order_id));
        const seen = new Set<string>();
        await writeEvents(
          tx,
          batch
            .filter(
              ({ order }) => ids.has(order.orderId) && !seen.has(order.orderId) && seen.add(order.orderId),
            )
            .map((b) => b.event),
        );
      });
    },
    // One batch at a time measured as well as several on Postgres here (the commit's fsync
    // dominates); the embedded store has a single connection anyway.
    { concurrency: 1 },
  );
  return {
    insert: (order, event) => insertBatch({ order, event }),
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
    cancel: (order, event) =>
      db.transaction(async (tx) => {
        // The row lock taken by this UPDATE orders concurrent cancels: the second sees the
        // first's CANCELLED, updates nothing and writes no event.
        const rows = await tx.query(
          "UPDATE purchase_orders SET status = 'CANCELLED', cancelled_at = $2 WHERE order_id = $1 AND status = 'APPROVED' RETURNING order_id",
          [order.orderId, order.cancelledAt],
        );
        if (rows.length === 0) return false;
        await writeEvents(tx, [event]);
        return true;
      }),
  };
}

interface OutboxRow {
  seq: string;
  event_id: string;
  type: OutboxEvent['type'];
  subject: string;
  time: string;
  data: OutboxEvent['data'];
}

/**
 * The outbox in the SQL store. `FOR UPDATE SKIP LOCKED`: on Postgres, relays in several
 * procurement replicas each take rows no other holds, so no row is relayed by two at once;
 * PGlite (one process, one connection) runs the same SQL.
 */
export function sqlOutbox(db: Db): OutboxStore {
  return {
    relay: (limit, publish) =>
      db.transaction(async (tx) => {
        const rows = await tx.query<OutboxRow>(
          'SELECT seq::text AS seq, event_id, type, subject, time, data FROM procurement_outbox WHERE relayed_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED',
          [limit],
        );
        const done: string[] = [];
        let error: unknown;
        for (const r of rows) {
          try {
            await publish({ id: r.event_id, type: r.type, subject: r.subject, time: r.time, data: r.data });
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
      }),
    async prune(beforeMs) {
      await db.query('DELETE FROM procurement_outbox WHERE relayed_at IS NOT NULL AND relayed_at < $1', [
        new Date(beforeMs).toISOString(),
      ]);
    },
  };
}
