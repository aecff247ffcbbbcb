import { type AuditEntry, type ChainedEntry, GENESIS_HASH, linkHash } from './entry.ts';
import { ephemeralAuditKeys } from './keys.ts';
import type { AuditLog } from './log.ts';

/**
 * Not durable: ORDER_STORE=memory (benchmarks of the gateway's own cost). Still chained with
 * an HMAC, so its cost is measured; keeps the newest `maxEntries` (a ring) to bound the heap.
 */
export function memoryAuditLog(maxEntries = 10_000, keys = ephemeralAuditKeys()): AuditLog {
  const ring: ChainedEntry[] = [];
  let seq = 0;
  let hash = GENESIS_HASH;
  return {
    append(entry: AuditEntry) {
      seq += 1;
      const key = keys.current();
      const next = linkHash(seq, hash, entry, key);
      ring[(seq - 1) % maxEntries] = { ...entry, seq, prevHash: hash, keyId: key.kid, hash: next };
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
