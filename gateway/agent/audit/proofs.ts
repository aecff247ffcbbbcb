import type { Clock } from '../../../lib/clock.ts';
import { leafHash } from '../../../lib/merkle/index.ts';
import type { QuoteKeys } from '../../../lib/quote-token/index.ts';
import { auditLeaf } from './entry.ts';
import type { AuditLog } from './log.ts';
import type { AuditTree, TreeSnapshot } from './tree.ts';
import { type SignedTreeHead, signTreeHead } from './tree-head.ts';

/** An order's audit entries in one answer: its first ones (creation first). */
export const MAX_PROOF_ENTRIES = 100;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** One audit entry of the order, its leaf and its inclusion proof in the signed tree. */
export interface AuditProofEntry {
  /** Position in the tree: the entry's seq - 1. */
  readonly leaf_index: number;
  readonly seq: number;
  /** The leaf input, exactly (auditLeaf): the entry's canonical JSON text. */
  readonly leaf: string;
  /** SHA-256(0x00 ‖ leaf), hex. */
  readonly leaf_hash: string;
  readonly at: string;
  readonly trace_id: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly reason: string;
  /** PATH(leaf_index, D[tree_size]) of RFC 9162 §2.1.3.1, hex, leaf's sibling first. */
  readonly inclusion_path: readonly string[];
}

export interface OrderAuditProof {
  readonly order_id: string;
  readonly tree_head: SignedTreeHead;
  readonly entries: readonly AuditProofEntry[];
  /** The order has more entries than one answer carries (its first MAX_PROOF_ENTRIES are here). */
  readonly more_entries: boolean;
}

export interface ConsistencyAnswer {
  readonly first: number;
  readonly second: number;
  /** PROOF(first, D[second]) of RFC 9162 §2.1.4.1, hex. */
  readonly consistency_path: readonly string[];
  /** The signed head of the tree of `second` entries. */
  readonly tree_head: SignedTreeHead;
}

export interface AuditProofs {
  /** The order's entries (oldest first) with inclusion proofs in the current signed tree. */
  forOrder(orderId: string): Promise<OrderAuditProof>;
  /**
   * The consistency proof from the tree of `first` entries to that of `second` (default: the
   * current size); `beyond` (the log's size) when the one `asked` is larger than the log.
   */
  consistency(
    first: number,
    second?: number,
  ): Promise<ConsistencyAnswer | { beyond: number; asked: 'first' | 'second' }>;
}

/**
 * Inclusion and consistency proofs over the audit log (docs/audit-proofs.md). Entries still
 * queued are flushed first, so a call that just happened is in the tree. A tree head is signed
 * once per tree size (the newest one is kept), with the checkpoint key.
 */
export function auditProofs(o: {
  log: AuditLog;
  tree: AuditTree;
  keys: Pick<QuoteKeys, 'signingKey'>;
  clock: Clock;
}): AuditProofs {
  let signed: SignedTreeHead | undefined;
  const headOf = (s: TreeSnapshot, size = s.size): SignedTreeHead => {
    const root = s.tree.root(size);
    if (signed?.tree_size === size && signed.root_hash === hex(root)) return signed;
    const head = signTreeHead(o.keys, { treeSize: size, rootHash: root, timestamp: o.clock.now() });
    if (size === s.size) signed = head;
    return head;
  };
  const current = async () => {
    await o.log.flush();
    return o.tree.sync();
  };

  return {
    async forOrder(orderId) {
      const s = await current();
      const found = await o.log.query({ orderId, limit: MAX_PROOF_ENTRIES + 1, oldestFirst: true });
      // An entry written after the sync (another gateway's) is in the next answer's tree.
      const inTree = found.filter((e) => e.seq <= s.size);
      const entries = inTree.slice(0, MAX_PROOF_ENTRIES).map((e): AuditProofEntry => {
        const leaf = auditLeaf(e.seq, e);
        return {
          leaf_index: e.seq - 1,
          seq: e.seq,
          leaf,
          leaf_hash: hex(leafHash(leaf)),
          at: new Date(e.at).toISOString(),
          trace_id: e.traceId,
          method: e.method,
          path: e.path,
          status: e.status,
          reason: e.reason,
          inclusion_path: s.tree.inclusion(e.seq - 1, s.size).map(hex),
        };
      });
      return {
        order_id: orderId,
        tree_head: headOf(s),
        entries,
        more_entries: found.length > MAX_PROOF_ENTRIES,
      };
    },
    async consistency(first, second) {
      const s = await current();
      const to = second ?? s.size;
      if (to > s.size) return { beyond: s.size, asked: 'second' };
      if (first > to) return { beyond: s.size, asked: 'first' };
      return {
        first,
        second: to,
        consistency_path: first === 0 ? [] : s.tree.consistency(first, to).map(hex),
        tree_head: headOf(s, to),
      };
    },
  };
}
