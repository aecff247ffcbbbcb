import type { AuditEntry, ChainedEntry } from './entry.ts';

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
}
