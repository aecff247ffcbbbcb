import type { Db, Migration } from '../../../lib/db/index.ts';
import { decide, type IdempotencyStore, type IdempotencyTimes, type StoredReply } from './store.ts';

/**
 * Idempotency records in the SQL store: the third adapter of the order route's store, for the
 * embedded topology's ACP routes, whose replies must be replayed for 24 hours (RFC
 * agentic_checkout §6.6), across a restart too. The in-memory adapter forgets them on exit;
 * /v2 orders need no more, since their order id is derived from the key and the domain finds the
 * order again. The same decide() as the other adapters judges a record.
 */
export const idempotencyMigrations: readonly Migration[] = [
  {
    id: 'agent:201-idempotency-records',
    sql: `CREATE TABLE IF NOT EXISTS agent_idempotency (
      key text PRIMARY KEY,
      fp text NOT NULL,
      exp bigint NOT NULL,
      reply text
    )`,
  },
];

/** Expired records are swept every this many claims (the table stays bounded). */
const SWEEP_EVERY = 500;

interface Row {
  claimed: string | number;
  fp: string | null;
  exp: string | number | null;
  reply: string | null;
}

export function sqlIdempotencyStore(db: Db, times: IdempotencyTimes): IdempotencyStore {
  let claims = 0;
  /**
   * Claims the key when it is free or its record expired, and reads what was there before, in
   * one statement (the outer SELECT sees the table as it was before the claim).
   */
  const claim = async (key: string, fingerprint: string, now: number) =>
    (
      await db.query<Row>(
        `WITH claim AS (
           INSERT INTO agent_idempotency (key, fp, exp, reply) VALUES ($1, $2, $3, NULL)
           ON CONFLICT (key) DO UPDATE SET fp = EXCLUDED.fp, exp = EXCLUDED.exp, reply = NULL
           WHERE agent_idempotency.exp <= $4
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM claim) AS claimed, r.fp, r.exp, r.reply
         FROM (SELECT 1) AS one LEFT JOIN agent_idempotency r ON r.key = $1`,
        [key, fingerprint, now + times.inFlightMs, now],
      )
    )[0];
  return {
    async begin(key, fingerprint, now) {
      if (++claims % SWEEP_EVERY === 0)
        await db.query('DELETE FROM agent_idempotency WHERE exp <= $1', [now]);
      // A claim that lost to a concurrent first use may not see that row in its own snapshot
      // (PostgreSQL, read committed): then it asks again, and the next statement sees it.
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = await claim(key, fingerprint, now);
        if (Number(row?.claimed) === 1) return { kind: 'started' };
        if (!row || row.fp === null) continue;
        return decide(
          {
            fp: row.fp,
            exp: Number(row.exp),
            ...(row.reply ? { reply: JSON.parse(row.reply) as StoredReply } : {}),
          },
          fingerprint,
          now,
        );
      }
      return { kind: 'in-flight' };
    },
    async complete(key, fingerprint, reply, now) {
      await db.query(
        `INSERT INTO agent_idempotency (key, fp, exp, reply) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key) DO UPDATE SET fp = EXCLUDED.fp, exp = EXCLUDED.exp, reply = EXCLUDED.reply`,
        [key, fingerprint, now + times.ttlMs, JSON.stringify(reply)],
      );
    },
    async release(key) {
      await db.query('DELETE FROM agent_idempotency WHERE key = $1', [key]);
    },
  };
}
