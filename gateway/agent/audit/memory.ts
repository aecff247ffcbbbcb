import { type AuditEntry, type ChainedEntry, chainHash, GENESIS_HASH } from './entry.ts';
import type { AuditLog } from './log.ts';

/**
 * Not durable: ORDER_STORE=memory (benchmarks of the gateway's own cost). Still chained, so
 * the hashing cost is measured; keeps the newest `maxEntries` (a ring) to bound the heap.
 */
export function memoryAuditLog(maxEntries = 10_000): AuditLog {
  const ring: ChainedEntry[] = [];
  let seq = 0;
  let hash = GENESIS_HASH;
  return {
    append(entry: AuditEntry) {
      seq += 1;
      const next = chainHash(seq, hash, entry);
      ring[(seq - 1) % maxEntries] = { ...entry, seq, prevHash: hash, hash: next };
      hash = next;
    },
    async flush() {},
    async read(fromSeq = 1, limit = 1000) {
      return ring
        .filter((e) => e.seq >= fromSeq)
        .sort((a, b) => a.seq - b.seq)
        .slice(0, limit);
    },
  };
}
