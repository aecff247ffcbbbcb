import type { Db, Queryable } from '../../../lib/db/index.ts';
import type { RedemptionResult, ReleaseResult } from '../domain/shapes.ts';
import type { RedemptionStore } from './redemptions.ts';

/** Thrown inside the transaction to roll it back when a cap is reached. */
class CapReached extends Error {
  constructor(readonly promotionIds: string[]) {
    super('redemption cap reached');
  }
}

/**
 * SQL adapter (PGlite embedded, Postgres distributed). The cap check and the increment are one
 * statement, `INSERT … ON CONFLICT DO UPDATE … WHERE count < cap`: Postgres locks the counter
 * row, so concurrent redemptions queue on it and re-check the cap after the first commits.
 * Counters are touched in promotion-id order, so two orders never deadlock.
 */
export function createSqlRedemptionStore(db: Db): RedemptionStore {
  const existing = async (q: Queryable, customerId: string, orderId: string) => {
    const rows = await q.query<{ promotion_ids: string[] | string }>(
      'SELECT promotion_ids FROM promotion_redemption_orders WHERE customer_id = $1 AND order_id = $2',
      [customerId, orderId],
    );
    const ids = rows[0]?.promotion_ids;
    return ids === undefined ? undefined : typeof ids === 'string' ? (JSON.parse(ids) as string[]) : ids;
  };

  return {
    kind: 'sql',
    async countsFor(customerId) {
      const rows = await db.query<{ promotion_id: string; count: number }>(
        'SELECT promotion_id, count FROM promotion_redemption_counts WHERE customer_id = $1',
        [customerId],
      );
      return new Map(rows.map((r) => [r.promotion_id, Number(r.count)]));
    },

    async redeem(orderId, customerId, items): Promise<RedemptionResult> {
      const ids = items.map((i) => i.promotionId);
      const result = (
        status: RedemptionResult['status'],
        promotionIds: string[],
        limitReached: string[] = [],
      ) => ({
        orderId,
        customerId,
        status,
        promotionIds,
        limitReached,
      });
      try {
        return await db.transaction(async (tx) => {
          const inserted = await tx.query(
            `INSERT INTO promotion_redemption_orders (customer_id, order_id, promotion_ids) VALUES ($1, $2, $3::jsonb)
             ON CONFLICT (customer_id, order_id) DO NOTHING RETURNING order_id`,
            [customerId, orderId, JSON.stringify(ids)],
          );
          if (inserted.length === 0)
            return result('ALREADY_RECORDED', (await existing(tx, customerId, orderId)) ?? []);
          const blocked: string[] = [];
          for (const item of [...items].sort((a, b) => (a.promotionId < b.promotionId ? -1 : 1))) {
            const rows = await tx.query(
              `INSERT INTO promotion_redemption_counts (customer_id, promotion_id, count) VALUES ($1, $2, 1)
               ON CONFLICT (customer_id, promotion_id) DO UPDATE SET count = promotion_redemption_counts.count + 1
               WHERE $3::integer IS NULL OR promotion_redemption_counts.count < $3::integer
               RETURNING count`,
              [customerId, item.promotionId, item.cap ?? null],
            );
            if (rows.length === 0) blocked.push(item.promotionId);
          }
          if (blocked.length > 0) throw new CapReached(blocked);
          return result('REDEEMED', ids);
        });
      } catch (err) {
        if (err instanceof CapReached) return result('LIMIT_REACHED', [], err.promotionIds);
        throw err;
      }
    },

    async release(orderId, customerId): Promise<ReleaseResult> {
      return db.transaction(async (tx) => {
        const rows = await tx.query<{ promotion_ids: string[] | string }>(
          `DELETE FROM promotion_redemption_orders WHERE customer_id = $1 AND order_id = $2 RETURNING promotion_ids`,
          [customerId, orderId],
        );
        const raw = rows[0]?.promotion_ids;
        if (raw === undefined) return { orderId, customerId, status: 'NOT_FOUND', promotionIds: [] };
        const ids = typeof raw === 'string' ? (JSON.parse(raw) as string[]) : raw;
        for (const id of [...ids].sort())
          await tx.query(
            `UPDATE promotion_redemption_counts SET count = count - 1
             WHERE customer_id = $1 AND promotion_id = $2 AND count > 0`,
            [customerId, id],
          );
        return { orderId, customerId, status: 'RELEASED', promotionIds: ids };
      });
    },
  };
}
