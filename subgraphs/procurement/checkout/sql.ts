import type { Queryable } from '../../../lib/db/index.ts';
import type { CheckoutSession } from './session.ts';
import type { CheckoutSessionStore } from './store.ts';

const parse = (doc: string): CheckoutSession => JSON.parse(doc) as CheckoutSession;

/** The SQL adapter; the same statements on PGlite and PostgreSQL. */
export function sqlCheckoutSessionStore(db: Queryable): CheckoutSessionStore {
  return {
    async insert(s) {
      const rows = await db.query(
        `INSERT INTO checkout_sessions (id, protocol, owner, status, version, expires_at, updated_at, doc)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [s.id, s.protocol, s.owner, s.status, s.version, s.expiresAt, s.updatedAt, JSON.stringify(s)],
      );
      return rows.length === 1;
    },
    async get(id) {
      const rows = await db.query<{ doc: string }>('SELECT doc FROM checkout_sessions WHERE id = $1', [id]);
      return rows[0] ? parse(rows[0].doc) : null;
    },
    async replace(next) {
      const rows = await db.query(
        `UPDATE checkout_sessions SET status = $2, version = $3, expires_at = $4, updated_at = $5, doc = $6
         WHERE id = $1 AND version = $7 RETURNING id`,
        [
          next.id,
          next.status,
          next.version,
          next.expiresAt,
          next.updatedAt,
          JSON.stringify(next),
          next.version - 1,
        ],
      );
      return rows.length === 1;
    },
    async list(q) {
      const rows = q.statuses?.length
        ? await db.query<{ doc: string }>(
            'SELECT doc FROM checkout_sessions WHERE status = ANY($1::text[]) ORDER BY updated_at DESC, id LIMIT $2',
            [q.statuses, q.limit],
          )
        : await db.query<{ doc: string }>(
            'SELECT doc FROM checkout_sessions ORDER BY updated_at DESC, id LIMIT $1',
            [q.limit],
          );
      return rows.map((r) => parse(r.doc));
    },
  };
}
