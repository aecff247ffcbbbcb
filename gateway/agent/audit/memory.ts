import { type AuditEntry, type ChainedEntry, chain, GENESIS_HASH, verifyEntries } from './entry.ts';
import { ephemeralAuditKeys } from './keys.ts';
import { type AuditLog, matches } from './log.ts';
import type { AuditReport } from './verify.ts';

/**
 * Not durable: ORDER_STORE=memory (benchmarks of the gateway's own cost). Still chained with
 * an HMAC, so its cost is measured; keeps the newest `maxEntries` (a ring) to bound the heap.
 */
export function memoryAuditLog(
  maxEntries = 10_000,
  keys = ephemeralAuditKeys(),
): AuditLog & { verify(): Promise<AuditReport> } {
  const ring: ChainedEntry[] = [];
  let seq = 0;
  let hash = GENESIS_HASH;
  const read = async (fromSeq = 1, limit = 1000) =>
    ring
      .filter((e) => e.seq >= fromSeq)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit);
  return {
    append(entry: AuditEntry) {
      const [chained] = chain({ seq, hash }, [entry], keys.current()) as [ChainedEntry];
      ring[(chained.seq - 1) % maxEntries] = chained;
      ({ seq, hash } = chained);
    },
    async flush() {},
    read,
    async query(q) {
      if (q.oldestFirst) return (await read(1, maxEntries)).filter((e) => matches(q, e)).slice(0, q.limit);
      const out: ChainedEntry[] = [];
      // Newest first: walk the ring backwards from the last written entry.
      for (let s = seq; s > Math.max(0, seq - maxEntries) && out.length < q.limit; s--) {
        const e = ring[(s - 1) % maxEntries] as ChainedEntry;
        if (matches(q, e)) out.push(e);
      }
      return out;
    },
    /** The ring's entries: the oldest kept one links to what was dropped, so the walk starts there. */
    async verify(): Promise<AuditReport> {
      const entries = await read(1, maxEntries);
      const first = entries[0];
      const check = verifyEntries(
        entries,
        { keyOf: keys.keyOf },
        first ? { seq: first.seq - 1, hash: first.prevHash } : undefined,
      );
      return check.ok
        ? { ok: true, entries: check.entries, anchoredUpTo: 0, unanchored: check.entries }
        : check;
    },
  };
}
