import { createHash } from 'node:crypto';

/** One audited agent call (spec, "Auditing"): written after the response. */
export interface AuditEntry {
  /** Epoch ms when the response finished. */
  readonly at: number;
  /** X-Trace-Id, or `unknown-trace`. */
  readonly traceId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** The verified SPIFFE ID, or null when identity failed. */
  readonly identity: string | null;
  /** Why it was refused, or `ok`. */
  readonly reason: string;
}

/** An entry in the chain: its position, its predecessor's hash and its own. */
export interface ChainedEntry extends AuditEntry {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/**
 * hash = SHA-256(prevHash ‖ canonical entry). Changing any field of an entry changes its hash
 * and breaks the next entry's link; removing an entry breaks its successor's link.
 */
export function chainHash(seq: number, prevHash: string, e: AuditEntry): string {
  const canonical = JSON.stringify([
    seq,
    e.at,
    e.traceId,
    e.method,
    e.path,
    e.status,
    e.durationMs,
    e.identity,
    e.reason,
  ]);
  return createHash('sha256').update(prevHash).update('\n').update(canonical).digest('hex');
}

export function chain(prev: { seq: number; hash: string }, entries: readonly AuditEntry[]): ChainedEntry[] {
  const out: ChainedEntry[] = [];
  let { seq, hash } = prev;
  for (const e of entries) {
    seq += 1;
    const next = chainHash(seq, hash, e);
    out.push({ ...e, seq, prevHash: hash, hash: next });
    hash = next;
  }
  return out;
}

export type ChainCheck =
  | { readonly ok: true; readonly entries: number }
  | { readonly ok: false; readonly seq: number; readonly problem: string };

/** Walks entries in seq order; reports the first broken link. Pure. */
export function verifyEntries(
  entries: Iterable<ChainedEntry>,
  start = { seq: 0, hash: GENESIS_HASH },
): ChainCheck {
  let { seq, hash } = start;
  let n = 0;
  for (const e of entries) {
    if (e.seq !== seq + 1)
      return { ok: false, seq: seq + 1, problem: `entry ${seq + 1} is missing (next is ${e.seq})` };
    if (e.prevHash !== hash)
      return {
        ok: false,
        seq: e.seq,
        problem: `entry ${e.seq} does not link to entry ${seq} (removed or reordered)`,
      };
    if (chainHash(e.seq, e.prevHash, e) !== e.hash)
      return {
        ok: false,
        seq: e.seq,
        problem: `entry ${e.seq} was altered (its hash does not match its content)`,
      };
    seq = e.seq;
    hash = e.hash;
    n++;
  }
  return { ok: true, entries: n };
}
