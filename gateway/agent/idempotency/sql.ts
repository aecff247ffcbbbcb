import { BoundedMap } from '../../../lib/bounded-map.ts';
import { groupCommit } from '../../../lib/db/group-commit.ts';
import type { Db, Migration } from '../../../lib/db/index.ts';
import { decide, type IdempotencyStore, type IdempotencyTimes, type StoredReply } from './store.ts';

/**
 * Idempotency records kept in the embedded SQL store: the third adapter of the order route's
 * store, for the embedded topology's ACP routes, whose replies must be replayed for 24 hours
 * (RFC agentic_checkout §6.6), across a restart too. The in-memory adapter forgets them on exit;
 * /v2 orders need no more, since their order id is derived from the key and the domain finds
 * the order again. The same decide() as the other adapters judges a record.
 *
 * Made for a database this process alone writes (the embedded PGlite), so it keeps what it can
 * in memory and writes only what must survive a restart: claims of keys in flight live in
 * memory only (a crash frees them, as the Redis adapter's expiry does), and each finished
 * reply is written once. What it knows of finished records (key, fingerprint, expiry; not the
 * reply) is in memory from the start (loaded once), so a new key costs no read; a replay reads
 * its reply. Past `maxKnown` records it can no longer tell a new key from a forgotten one, and
 * asks the table.
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
  {
    // The sweep deletes the expired records by this index, not by reading the whole table
    // (a day of replies): it ran every 500 replies on the reply's path and grew with the table.
    id: 'agent:202-idempotency-expiry',
    sql: 'CREATE INDEX IF NOT EXISTS agent_idempotency_exp ON agent_idempotency (exp)',
  },
];

/**
 * Expired records are swept every this many finished replies (the table stays bounded), beside
 * the reply, not before it: by the expiry index, and in memory from the oldest record on.
 */
const SWEEP_EVERY = 500;
/** Finished records known in memory (key, fingerprint, expiry: ~200 bytes each). */
const MAX_KNOWN = 200_000;

interface Meta {
  readonly fp: string;
  readonly exp: number;
}

export async function sqlIdempotencyStore(
  db: Db,
  times: IdempotencyTimes,
  o: { maxKnown?: number } = {},
): Promise<IdempotencyStore> {
  const maxKnown = o.maxKnown ?? MAX_KNOWN;
  const claims = new BoundedMap<string, Meta>(100_000);
  /**
   * Replies being written: a request answered before its reply is stored (a recoverable ACP
   * create) is replayed from here by a retry that comes meanwhile, not refused as in flight.
   */
  const finishing = new Map<string, Meta & { reply: StoredReply; write: Promise<void> }>();
  const known = new Map<string, Meta>();
  /** Some finished record may be in the table and not in `known`: a miss must ask the table. */
  let partial = false;
  let writes = 0;

  const remember = (key: string, meta: Meta) => {
    if (!known.has(key) && known.size >= maxKnown) {
      const oldest = known.keys().next();
      if (!oldest.done) known.delete(oldest.value);
      partial = true;
    }
    known.delete(key); // to the end: `known` stays in the order of expiry (see sweep)
    known.set(key, meta);
  };

  const loaded = await db.query<{ key: string; fp: string; exp: string | number }>(
    'SELECT key, fp, exp FROM agent_idempotency WHERE reply IS NOT NULL AND exp > $1 ORDER BY exp LIMIT $2',
    [Date.now(), maxKnown + 1],
  );
  for (const r of loaded.slice(0, maxKnown)) known.set(r.key, { fp: r.fp, exp: Number(r.exp) });
  partial = loaded.length > maxKnown;

  const fromTable = async (key: string): Promise<{ meta: Meta; reply: StoredReply } | undefined> => {
    const row = (
      await db.query<{ fp: string; exp: string | number; reply: string | null }>(
        'SELECT fp, exp, reply FROM agent_idempotency WHERE key = $1',
        [key],
      )
    )[0];
    if (!row?.reply) return undefined;
    return { meta: { fp: row.fp, exp: Number(row.exp) }, reply: JSON.parse(row.reply) as StoredReply };
  };

  // Finished replies are group-committed (lib/db/group-commit.ts): the replies that finish while
  // one statement runs are written by the next, one statement for several requests' records on
  // the store's single thread. A key is at most once in a batch (its claim is exclusive); were
  // it twice, the last reply wins, as two statements in a row would leave it.
  const writeReplies = groupCommit<{ key: string; fp: string; exp: number; reply: string }, void>(
    async (batch) => {
      const last = new Map(batch.map((r) => [r.key, r]));
      const params: unknown[] = [];
      const values = [...last.values()].map((r) => {
        params.push(r.key, r.fp, r.exp, r.reply);
        const n = params.length;
        return `($${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      });
      await db.query(
        `INSERT INTO agent_idempotency (key, fp, exp, reply) VALUES ${values.join(',')}
         ON CONFLICT (key) DO UPDATE SET fp = EXCLUDED.fp, exp = EXCLUDED.exp, reply = EXCLUDED.reply`,
        params,
      );
      return batch.map(() => undefined);
    },
  );

  /**
   * `known` is in the order records were finished, so nearly in expiry order: the expired ones
   * are at its front (one finished out of order is dropped a sweep later; begin() checks the
   * expiry either way). Not awaited by the reply; a failed DELETE is tried by the next sweep.
   */
  const sweep = (now: number) => {
    for (const [k, m] of known) {
      if (m.exp > now) break;
      known.delete(k);
    }
    db.query('DELETE FROM agent_idempotency WHERE exp <= $1', [now]).catch(() => {});
  };

  return {
    async begin(key, fingerprint, now) {
      const done = finishing.get(key);
      if (done && done.exp > now)
        return done.fp === fingerprint ? { kind: 'replay', reply: done.reply } : { kind: 'mismatch' };
      const claim = claims.get(key);
      if (claim && claim.exp > now) return decide(claim, fingerprint, now);
      let meta = known.get(key);
      let reply: StoredReply | undefined;
      if ((!meta || meta.exp <= now) && partial) {
        const found = await fromTable(key);
        if (found) ({ meta, reply } = found);
      }
      if (meta && meta.exp > now) {
        if (meta.fp !== fingerprint) return { kind: 'mismatch' };
        reply ??= (await fromTable(key))?.reply;
        if (reply) return { kind: 'replay', reply };
      }
      claims.set(key, { fp: fingerprint, exp: now + times.inFlightMs });
      return { kind: 'started' };
    },
    async complete(key, fingerprint, reply, now) {
      const exp = now + times.ttlMs;
      if (++writes % SWEEP_EVERY === 0) sweep(now);
      const write = writeReplies({ key, fp: fingerprint, exp, reply: JSON.stringify(reply) });
      finishing.set(key, { fp: fingerprint, exp, reply, write });
      try {
        await write;
      } finally {
        finishing.delete(key);
      }
      remember(key, { fp: fingerprint, exp });
      claims.delete(key);
    },
    async settled() {
      await Promise.allSettled([...finishing.values()].map((f) => f.write));
    },
    async release(key) {
      claims.delete(key);
      known.delete(key);
      await db.query('DELETE FROM agent_idempotency WHERE key = $1', [key]);
    },
  };
}
