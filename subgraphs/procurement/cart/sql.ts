import type { Queryable } from '../../../lib/db/index.ts';
import type { Cart } from './cart.ts';
import type { CartStore } from './store.ts';

const parse = (doc: string): Cart => JSON.parse(doc) as Cart;

/**
 * The SQL adapter; the same statements on PGlite and PostgreSQL. One statement per step: a cart
 * is written once per agent request (no completion, no order), so the checkout store's group
 * commit and in-memory copy are not needed here.
 */
export function sqlCartStore(db: Queryable): CartStore {
  return {
    async insert(c) {
      const rows = await db.query<{ id: string }>(
        `INSERT INTO carts (id, protocol, owner, version, expires_at, updated_at, doc)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [c.id, c.protocol, c.owner, c.version, c.expiresAt, c.updatedAt, JSON.stringify(c)],
      );
      return rows.length === 1;
    },
    async get(id) {
      const rows = await db.query<{ doc: string }>('SELECT doc FROM carts WHERE id = $1', [id]);
      const doc = rows[0]?.doc;
      return doc === undefined ? null : parse(doc);
    },
    async replace(next) {
      const rows = await db.query<{ id: string }>(
        `UPDATE carts SET version = $2, expires_at = $3, updated_at = $4, doc = $5
         WHERE id = $1 AND version = $6 RETURNING id`,
        [next.id, next.version, next.expiresAt, next.updatedAt, JSON.stringify(next), next.version - 1],
      );
      return rows.length === 1;
    },
    async delete(id, version) {
      const rows = await db.query<{ id: string }>(
        'DELETE FROM carts WHERE id = $1 AND version = $2 RETURNING id',
        [id, version],
      );
      return rows.length === 1;
    },
    async list(q) {
      const rows = await db.query<{ doc: string }>(
        'SELECT doc FROM carts WHERE expires_at > $1 ORDER BY updated_at DESC, id LIMIT $2',
        [q.nowMs, q.limit],
      );
      return rows.map((r) => parse(r.doc));
    },
    async purgeExpired(nowMs) {
      const rows = await db.query<{ id: string }>('DELETE FROM carts WHERE expires_at <= $1 RETURNING id', [
        nowMs,
      ]);
      return rows.length;
    },
  };
}
