import { createHash, createHmac } from 'node:crypto';

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
  /**
   * How the identity was proven (issue 12): `mtls`, `proxy`, `signature`, `mtls+signature`,
   * `proxy+signature`; null or absent when identity failed and for entries from before.
   */
  readonly identitySource?: string | null;
  /**
   * The order the call created or read (issue 14: the operator searches the audit by order).
   * Absent for calls that concern no order, and for entries from before the column existed.
   */
  readonly orderId?: string | null;
}

/** An entry in the chain: its position, its predecessor's link, the key of its own link, and that link. */
export interface ChainedEntry extends AuditEntry {
  readonly seq: number;
  readonly prevHash: string;
  /**
   * The id of the HMAC key its link is made with (the key lives outside the database). Null
   * only for entries written before links were keyed (plain SHA-256), accepted in the prefix a
   * signed checkpoint sealed (see verify.ts).
   */
  readonly keyId: string | null;
  readonly hash: string;
}

/** A link key: the secret is held outside the database (keys.ts). */
export interface LinkKey {
  readonly kid: string;
  readonly secret: Buffer;
}

export const GENESIS_HASH = '0'.repeat(64);

// The identity source and the order id are linked only when one of them is present, and then
// both, in fixed positions (null for the absent one), so neither can pass for the other; entries
// written before they existed keep exactly the link they were written with.
const canonical = (seq: number, e: AuditEntry) => {
  const fields: unknown[] = [
    seq,
    e.at,
    e.traceId,
    e.method,
    e.path,
    e.status,
    e.durationMs,
    e.identity,
    e.reason,
  ];
  if (e.identitySource || e.orderId) fields.push(e.identitySource ?? null, e.orderId ?? null);
  return JSON.stringify(fields);
};

/**
 * The leaf input of the audit's Merkle tree (docs/audit-proofs.md): the same canonical text the
 * entry's link is made over, `[seq, at, traceId, method, path, status, durationMs, identity,
 * reason(, identitySource, orderId)]` as JSON, so an entry has one serialisation everywhere.
 */
export const auditLeaf = (seq: number, e: AuditEntry): string => canonical(seq, e);

/**
 * link = HMAC-SHA-256(key, prevHash ‖ kid ‖ canonical entry). Changing any field of an entry
 * changes its link and breaks the next entry's; removing one breaks its successor's. Without
 * the key nobody can write a chain that verifies, so rewriting the whole table is detected
 * too (a plain hash chain could be recomputed by whoever can write the table).
 */
export function linkHash(seq: number, prevHash: string, e: AuditEntry, key: LinkKey): string {
  return createHmac('sha256', key.secret)
    .update(prevHash)
    .update('\n')
    .update(key.kid)
    .update('\n')
    .update(canonical(seq, e))
    .digest('hex');
}

/** The unkeyed link of entries written before keys (kept to verify a sealed legacy prefix). */
export function legacyHash(seq: number, prevHash: string, e: AuditEntry): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonical(seq, e)).digest('hex');
}

export function chain(
  prev: { seq: number; hash: string },
  entries: readonly AuditEntry[],
  key: LinkKey,
): ChainedEntry[] {
  const out: ChainedEntry[] = [];
  let { seq, hash } = prev;
  for (const e of entries) {
    seq += 1;
    const next = linkHash(seq, hash, e, key);
    // Not `{ ...e, seq, … }`: a clone that is then extended gets a hidden class of its own in
    // V8, one per entry, on every order's path (docs/performance.md, "Fifth pass").
    out.push(Object.assign({}, e, { seq, prevHash: hash, keyId: key.kid, hash: next }));
    hash = next;
  }
  return out;
}

export type BreakKind = 'missing' | 'relinked' | 'altered' | 'unknown-key' | 'unkeyed';

export type ChainCheck =
  | { readonly ok: true; readonly entries: number }
  | { readonly ok: false; readonly seq: number; readonly kind: BreakKind; readonly problem: string };

export interface VerifyOptions {
  /** The link key with this id, or undefined when no key of that id exists. */
  readonly keyOf: (kid: string) => Buffer | undefined;
  /** Unkeyed (legacy) entries are accepted up to this seq only: what a signed checkpoint sealed. */
  readonly legacyUntil?: number;
}

/** Walks entries in seq order; reports the first broken link. Pure. */
export function verifyEntries(
  entries: Iterable<ChainedEntry>,
  opts: VerifyOptions,
  start = { seq: 0, hash: GENESIS_HASH },
): ChainCheck {
  let { seq, hash } = start;
  let n = 0;
  const broken = (at: number, kind: BreakKind, problem: string): ChainCheck => ({
    ok: false,
    seq: at,
    kind,
    problem,
  });
  for (const e of entries) {
    if (e.seq !== seq + 1)
      return broken(seq + 1, 'missing', `entry ${seq + 1} is missing (next is ${e.seq})`);
    if (e.prevHash !== hash)
      return broken(e.seq, 'relinked', `entry ${e.seq} does not link to entry ${seq} (removed or reordered)`);
    let expected: string;
    if (e.keyId === null) {
      if (e.seq > (opts.legacyUntil ?? 0))
        return broken(e.seq, 'unkeyed', `entry ${e.seq} has no link key (only a sealed legacy prefix may)`);
      expected = legacyHash(e.seq, e.prevHash, e);
    } else {
      const secret = opts.keyOf(e.keyId);
      if (!secret) return broken(e.seq, 'unknown-key', `entry ${e.seq} names an unknown link key ${e.keyId}`);
      expected = linkHash(e.seq, e.prevHash, e, { kid: e.keyId, secret });
    }
    if (expected !== e.hash)
      return broken(e.seq, 'altered', `entry ${e.seq} was altered (its link does not match its content)`);
    seq = e.seq;
    hash = e.hash;
    n++;
  }
  return { ok: true, entries: n };
}
