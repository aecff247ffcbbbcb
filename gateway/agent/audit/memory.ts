import { type AuditEntry, type ChainedEntry, chain, GENESIS_HASH } from './entry.ts';
import type { AuditLog } from './log.ts';

/** Not durable: ORDER_STORE=memory (benchmarks of the gateway's own cost). Still chained. */
export function memoryAuditLog(maxEntries = 100_000): AuditLog {
  let entries: ChainedEntry[] = [];
  let tail = { seq: 0, hash: GENESIS_HASH };
  return {
    append(entry: AuditEntry) {
      const [e] = chain(tail, [entry]);
      if (!e) return;
      tail = { seq: e.seq, hash: e.hash };
      entries.push(e);
      if (entries.length > maxEntries) entries = entries.slice(entries.length - maxEntries / 2);
    },
    async flush() {},
    async read(fromSeq = 1, limit = 1000) {
      return entries.filter((e) => e.seq >= fromSeq).slice(0, limit);
    },
  };
}
