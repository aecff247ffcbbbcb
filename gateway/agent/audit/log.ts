import type { AuditEntry, ChainedEntry } from './entry.ts';

/** The operator's audit search: every given filter holds; entries newest first. */
export interface AuditQuery {
  readonly identity?: string;
  readonly orderId?: string;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  /** Only entries older than this seq (the cursor of the previous page). */
  readonly beforeSeq?: number;
  readonly limit: number;
  /** Oldest first (seq ascending) instead of newest first: an order's audit proof. */
  readonly oldestFirst?: boolean;
}

/**
 * The tamper-evident audit log of agent calls. `append` never delays the response: entries
 * are queued and written in batches (one transaction per batch, chained in order).
 */
export interface AuditLog {
  append(entry: AuditEntry): void;
  /** Resolves when everything appended so far is stored. */
  flush(): Promise<void>;
  /** Entries in order (tests, verification). */
  read(fromSeq?: number, limit?: number): Promise<ChainedEntry[]>;
  /** Entries matching the query, newest first (seq descending; ascending with oldestFirst), at most `limit`. */
  query(q: AuditQuery): Promise<ChainedEntry[]>;
}

/** The query as a predicate: the memory log filters with it, and tests use it as the oracle. */
export const matches = (q: AuditQuery, e: ChainedEntry): boolean =>
  (q.identity === undefined || e.identity === q.identity) &&
  (q.orderId === undefined || e.orderId === q.orderId) &&
  (q.since === undefined || e.at >= q.since) &&
  (q.until === undefined || e.at < q.until) &&
  (q.beforeSeq === undefined || e.seq < q.beforeSeq);
