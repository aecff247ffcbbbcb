import type { Db } from '../../../lib/db/index.ts';
import { usdAmount } from '../contract/json.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import { groupCommit } from './group-commit.ts';
import type { OrderStore } from './store.ts';

const COLUMNS = 9;

interface Row {
  order_id: string;
  status: 'APPROVED';
  agent_id: string;
  spiffe_id: string;
  sku: string;
  quantity: number;
  /** numeric, selected as text: the exact decimal. */
  allocated_budget: string;
  processed_at: number;
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
    traceId: r.trace_id,
  });

/** Orders in the SQL store (PGlite embedded, Postgres with DATABASE_URL). */
export function sqlOrderStore(db: Db): OrderStore {
  const insertBatch = groupCommit<PurchaseOrder>(
    async (batch) => {
      const values: string[] = [];
      const params: unknown[] = [];
      for (const o of batch) {
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
          o.traceId,
        );
      }
      await db.query(
        `INSERT INTO purchase_orders (order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget, processed_at, trace_id) VALUES ${values.join(',')} ON CONFLICT (order_id) DO NOTHING`,
        params,
      );
    },
    // One batch at a time measured as well as several on Postgres here (the commit's fsync
    // dominates); the embedded store has a single connection anyway.
    { concurrency: 1 },
  );
  const select =
    'SELECT order_id, status, agent_id, spiffe_id, sku, quantity, allocated_budget::text AS allocated_budget, processed_at, trace_id FROM purchase_orders';
  return {
    insert: insertBatch,
    async get(orderId) {
      const rows = await db.query<Row>(`${select} WHERE order_id = $1`, [orderId]);
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async list({ agentId, limit }) {
      const rows =
        agentId === undefined
          ? await db.query<Row>(`${select} ORDER BY seq DESC LIMIT $1`, [limit])
          : await db.query<Row>(`${select} WHERE agent_id = $1 ORDER BY seq DESC LIMIT $2`, [agentId, limit]);
      return rows.map(fromRow);
    },
  };
}
