import type { Db, Queryable } from '../../../lib/db/index.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { ChainHead } from './checkpoint.ts';
import { type AuditEntry, type ChainedEntry, chain, GENESIS_HASH } from './entry.ts';
import type { AuditKeys } from './keys.ts';
import type { AuditLog, AuditQuery } from './log.ts';

const MAX_BATCH = 500;
const GATHER_MS = 5;
const COLUMNS = 14;
// Several gateway processes may share one Postgres: one writer at a time extends the chain.
const CHAIN_LOCK = 727275;

interface Row {
  seq: string | number;
  at: string | number;
  trace_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  identity: string | null;
  reason: string;
  prev_hash: string;
  key_id: string | null;
  hash: string;
  identity_source?: string | null;
  order_id?: string | null;
}

export const fromAuditRow = (r: Row): ChainedEntry => ({
  seq: Number(r.seq),
  at: Number(r.at),
  traceId: r.trace_id,
  method: r.method,
  path: r.path,
  status: Number(r.status),
  durationMs: Number(r.duration_ms),
  identity: r.identity,
  reason: r.reason,
  identitySource: r.identity_source ?? null,
  prevHash: r.prev_hash,
  keyId: r.key_id,
  hash: r.hash,
  ...(r.order_id ? { orderId: r.order_id } : {}),
});

export async function readAudit(db: Queryable, fromSeq = 1, limit = 1000): Promise<ChainedEntry[]> {
  const rows = await db.query<Row>('SELECT * FROM agent_audit_log WHERE seq >= $1 ORDER BY seq LIMIT $2', [
    fromSeq,
    limit,
  ]);
  return rows.map(fromAuditRow);
}

/** The operator's search, newest first; only the filters given become conditions (so indexes apply). */
export async function queryAudit(db: Queryable, q: AuditQuery): Promise<ChainedEntry[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (q.identity !== undefined) add('identity = ?', q.identity);
  if (q.orderId !== undefined) add('order_id = ?', q.orderId);
  if (q.since !== undefined) add('at >= ?', q.since);
  if (q.until !== undefined) add('at < ?', q.until);
  if (q.beforeSeq !== undefined) add('seq < ?', q.beforeSeq);
  params.push(q.limit);
  const rows = await db.query<Row>(
    `SELECT * FROM agent_audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${q.oldestFirst ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromAuditRow);
}

type Tail = ChainHead;

/** The last entry's seq and link, and whether its link is keyed (genesis: seq 0). */
export async function readTail(q: Queryable): Promise<Tail & { keyed: boolean }> {
  const tail = await q.query<{ seq: string | number; hash: string; key_id: string | null }>(
    'SELECT seq, hash, key_id FROM agent_audit_log ORDER BY seq DESC LIMIT 1',
  );
  const t = tail[0];
  return t
    ? { seq: Number(t.seq), hash: t.hash, keyed: t.key_id !== null }
    : { seq: 0, hash: GENESIS_HASH, keyed: true };
}

function insertStatement(chained: readonly ChainedEntry[]): [string, unknown[]] {
  const values: string[] = [];
  const params: unknown[] = [];
  for (const e of chained) {
    const b = params.length;
    values.push(`(${Array.from({ length: COLUMNS }, (_, i) => `$${b + i + 1}`).join(',')})`);
    params.push(
      e.seq,
      e.at,
      e.traceId,
      e.method,
      e.path,
      e.status,
      e.durationMs,
      e.identity,
      e.reason,
      e.prevHash,
      e.keyId,
      e.hash,
      e.identitySource ?? null,
      e.orderId ?? null,
    );
  }
  return [
    `INSERT INTO agent_audit_log (seq, at, trace_id, method, path, status, duration_ms, identity, reason, prev_hash, key_id, hash, identity_source, order_id) VALUES ${values.join(',')}`,
    params,
  ];
}

/**
 * Extends the chain by one batch. Postgres may be shared by several gateway processes: one
 * writer at a time (advisory lock), reading the tail inside the transaction. The embedded
 * store belongs to this process alone, so its tail is kept in memory and a batch is one
 * INSERT (atomic by itself) instead of five blocking calls.
 */
function batchWriter(db: Db, keys: AuditKeys): (batch: readonly AuditEntry[]) => Promise<Tail | undefined> {
  const headOf = (chained: readonly ChainedEntry[]) => {
    const last = chained[chained.length - 1];
    return last && { seq: last.seq, hash: last.hash };
  };
  if (db.kind === 'pglite') {
    let tail: Tail | undefined;
    return async (batch) => {
      tail ??= await readTail(db);
      const chained = chain(tail, batch, keys.current());
      const [sql, params] = insertStatement(chained);
      await db.query(sql, params);
      tail = headOf(chained) ?? tail;
      return tail;
    };
  }
  return (batch) =>
    db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [CHAIN_LOCK]);
      const chained = chain(await readTail(tx), batch, keys.current());
      const [sql, params] = insertStatement(chained);
      await tx.query(sql, params);
      return headOf(chained);
    });
}

export interface SqlAuditOptions {
  /** The HMAC link keys (held outside the database). */
  readonly keys: AuditKeys;
  /** Told the chain head after each committed batch (the checkpointer seals it). */
  readonly onWritten?: (head: ChainHead) => void;
  readonly maxQueued?: number;
}

/**
 * Durable audit log in the SQL store. Appends are queued and written by one loop, a batch per
 * statement or transaction (group commit), within about GATHER_MS of the response. A failed batch is retried with backoff and kept in order; if
 * the store stays down, entries wait in memory (bounded) and errors are logged.
 */
export function sqlAuditLog(
  db: Db,
  log: Logger,
  opts: SqlAuditOptions,
): AuditLog & { close(): Promise<void> } {
  const maxQueued = opts.maxQueued ?? 100_000;
  const writeBatch = batchWriter(db, opts.keys);
  let queue: AuditEntry[] = [];
  let writing: Promise<void> | undefined;
  let closed = false;

  const loop = async () => {
    // Entries are written after their responses; a few ms of gathering makes batches large
    // enough that the audit costs little per call (the embedded store blocks while it writes).
    await new Promise((r) => setTimeout(r, GATHER_MS));
    let backoff = 50;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      try {
        const head = await writeBatch(batch);
        queue = queue.slice(batch.length);
        if (head) opts.onWritten?.(head);
        backoff = 50;
      } catch (err) {
        log.error({ err, pending: queue.length }, 'audit batch not written; retrying');
        if (closed) return;
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  };
  const kick = () => {
    writing ??= loop().finally(() => {
      writing = undefined;
      if (queue.length > 0 && !closed) kick();
    });
  };

  return {
    append(entry) {
      if (queue.length >= maxQueued) {
        log.error({ traceId: entry.traceId }, 'audit queue full; entry dropped');
        return;
      }
      queue.push(entry);
      kick();
    },
    async flush() {
      while (writing) await writing;
    },
    read: (fromSeq, limit) => readAudit(db, fromSeq, limit),
    query: (q) => queryAudit(db, q),
    async close() {
      // Write what is queued; stop at the first failure instead of retrying forever.
      closed = true;
      await this.flush();
    },
  };
}
