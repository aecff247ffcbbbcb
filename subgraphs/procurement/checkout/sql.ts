import { groupCommit } from '../../../lib/db/group-commit.ts';
import type { Db, Queryable } from '../../../lib/db/index.ts';
import { REHEARSAL_OWNER_SUFFIX } from './migrations.ts';
import type { CheckoutSession } from './session.ts';
import type { CheckoutSessionStore } from './store.ts';

const parse = (doc: string): CheckoutSession => JSON.parse(doc) as CheckoutSession;

/** A write of one session: a new one (version 0), or a change over the stored version `over`. */
interface Write {
  readonly kind: 'insert' | 'replace';
  readonly s: CheckoutSession;
  readonly over?: number;
}

/**
 * The SQL adapter; the same statements on PGlite and PostgreSQL.
 *
 * Writes are group-committed as the orders are (lib/db/group-commit.ts): the inserts and
 * compare-and-set updates that arrive while a statement runs go together in the next one, so
 * the store's thread (embedded) or connection (PostgreSQL) runs one statement for several
 * sessions' steps instead of one each (docs/performance.md, "ACP"). Each caller still gets its
 * own row's outcome: an insert is true only if its id was new, a replace only if the stored
 * version was the one it was computed from.
 */
export function sqlCheckoutSessionStore(db: Queryable): CheckoutSessionStore {
  const write = groupCommit<Write, boolean>((batch) => writeBatch(db, batch), { concurrency: 1 });
  // Reads by id are batched the same way (lib/db/group-commit.ts batches any keyed step, not
  // only writes): a step of a session the embedded store no longer holds in memory (cached.ts)
  // reads its row, and the reads that arrive while one statement runs share the next one
  // instead of one statement each on the store's single thread (docs/performance.md, "ACP",
  // eighth pass). A read asked for after a write was answered still sees that write.
  const read = groupCommit<string, CheckoutSession | null>(
    async (ids) => {
      const rows = await db.query<{ id: string; doc: string }>(
        'SELECT id, doc FROM checkout_sessions WHERE id = ANY($1::text[])',
        [[...new Set(ids)]],
      );
      const docs = new Map(rows.map((r) => [r.id, r.doc]));
      return ids.map((id) => {
        const doc = docs.get(id);
        return doc === undefined ? null : parse(doc);
      });
    },
    // The embedded store has one connection; PostgreSQL's pool runs several reads at once.
    { concurrency: (db as Partial<Db>).kind === 'postgres' ? 4 : 1 },
  );
  return {
    insert: (s) => write({ kind: 'insert', s }),
    get: (id) => read(id),
    replace: (next, over = next.version - 1) => write({ kind: 'replace', s: next, over }),
    async remove(ids) {
      const rows = await db.query<{ id: string }>(
        'DELETE FROM checkout_sessions WHERE id = ANY($1::text[]) RETURNING id',
        [[...ids]],
      );
      return rows.length;
    },
    async removeRehearsedBefore(before) {
      // The partial index's own predicate, so the planner can use it (migrations.ts).
      const rows = await db.query<{ id: string }>(
        `DELETE FROM checkout_sessions WHERE owner LIKE '%${REHEARSAL_OWNER_SUFFIX}' AND updated_at < $1 RETURNING id`,
        [before],
      );
      return rows.length;
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

/**
 * One statement per round, each session's id at most once in a round: the parts of one
 * statement do not see each other's rows (one snapshot), and an UPDATE … FROM with two source
 * rows for one target applies an unpredictable one. A second write of an id in the same batch
 * (two steps racing from one version, or an insert of an existing id) waits for the next round,
 * so it meets the first one's outcome exactly as it would one statement later.
 */
async function writeBatch(db: Queryable, batch: readonly Write[]): Promise<boolean[]> {
  const outcomes = new Array<boolean>(batch.length).fill(false);
  let pending = batch.map((w, i) => ({ w, i }));
  while (pending.length > 0) {
    const ids = new Set<string>();
    const round: typeof pending = [];
    const later: typeof pending = [];
    for (const x of pending) {
      if (ids.has(x.w.s.id)) later.push(x);
      else {
        ids.add(x.w.s.id);
        round.push(x);
      }
    }
    const written = await writeRound(
      db,
      round.map((x) => x.w),
    );
    for (const x of round) outcomes[x.i] = written.has(`${x.w.kind}:${x.w.s.id}`);
    pending = later;
  }
  return outcomes;
}

/** The ids this round inserted or updated, as `insert:<id>` / `replace:<id>`. */
async function writeRound(db: Queryable, round: readonly Write[]): Promise<Set<string>> {
  const params: unknown[] = [];
  const p = (v: unknown, cast = '') => {
    params.push(v);
    return `$${params.length}${cast}`;
  };
  const inserts = round.filter((w) => w.kind === 'insert').map(({ s }) => s);
  const replaces = round.filter((w) => w.kind === 'replace');
  const parts: string[] = [];
  const selects: string[] = [];
  if (inserts.length > 0) {
    const values = inserts.map(
      (s) =>
        `(${[p(s.id), p(s.protocol), p(s.owner), p(s.status), p(s.version), p(s.expiresAt), p(s.updatedAt), p(JSON.stringify(s))].join(',')})`,
    );
    parts.push(`inserted AS (
      INSERT INTO checkout_sessions (id, protocol, owner, status, version, expires_at, updated_at, doc)
      VALUES ${values.join(',')} ON CONFLICT (id) DO NOTHING RETURNING id)`);
    selects.push(`SELECT 'insert' AS kind, id FROM inserted`);
  }
  if (replaces.length > 0) {
    // Typed casts: a VALUES list has no column types of its own to compare with the table's.
    const values = replaces.map(
      ({ s, over }) =>
        `(${[p(s.id, '::text'), p(s.status, '::text'), p(s.version, '::integer'), p(over ?? s.version - 1, '::integer'), p(s.expiresAt, '::bigint'), p(s.updatedAt, '::bigint'), p(JSON.stringify(s), '::text')].join(',')})`,
    );
    parts.push(`replaced AS (
      UPDATE checkout_sessions AS t
      SET status = v.status, version = v.version, expires_at = v.expires_at, updated_at = v.updated_at, doc = v.doc
      FROM (VALUES ${values.join(',')}) AS v (id, status, version, over, expires_at, updated_at, doc)
      WHERE t.id = v.id AND t.version = v.over RETURNING t.id)`);
    selects.push(`SELECT 'replace' AS kind, id FROM replaced`);
  }
  const rows = await db.query<{ kind: string; id: string }>(
    `WITH ${parts.join(', ')} ${selects.join(' UNION ALL ')}`,
    params,
  );
  return new Set(rows.map((r) => `${r.kind}:${r.id}`));
}
