import { leafHash, MerkleTree } from '../../../lib/merkle/index.ts';
import type { ChainHead } from './checkpoint.ts';
import { auditLeaf, type ChainedEntry, GENESIS_HASH } from './entry.ts';

/** Where the tree reads the log from: entries in seq order, and the last entry. */
export interface AuditTreeSource {
  read(fromSeq: number, limit: number): Promise<ChainedEntry[]>;
  tail(): Promise<ChainHead>;
}

/** The tree as one sync left it: `tree` is never changed below `size` afterwards. */
export interface TreeSnapshot {
  readonly tree: MerkleTree;
  readonly size: number;
}

export interface AuditTree {
  /** Catches up with the stored log and returns the tree over entries 1…size. */
  sync(): Promise<TreeSnapshot>;
}

const PAGE = 5000;

/**
 * The Merkle tree (RFC 9162) over the audit log, leaf i being entry i + 1's auditLeaf. Kept in
 * memory and extended from the store on each sync (only the entries written since), so a proof
 * never rehashes the log. The leaf hashes come from what the store holds now: an entry edited
 * after the tree read it keeps its old leaf here (so a proof of it fails against the edited
 * entry), and a process that starts on an edited log builds another tree (so the consistency
 * proof from an earlier signed tree head fails). A log whose end no longer links to what the
 * tree read (cut, or cut and written again) is read again from the start. A missing entry stops
 * the tree before it: what follows cannot be proven until the log is repaired.
 */
export function auditTree(source: AuditTreeSource): AuditTree {
  let tree = new MerkleTree();
  /** The link of the tree's last entry. */
  let lastLink = GENESIS_HASH;
  let running: Promise<TreeSnapshot> | undefined;

  const restart = () => {
    tree = new MerkleTree();
    lastLink = GENESIS_HASH;
  };

  const catchUp = async (): Promise<TreeSnapshot> => {
    const tail = await source.tail();
    if (tail.seq < tree.size || (tail.seq === tree.size && tail.hash !== lastLink)) restart();
    while (tree.size < tail.seq) {
      const page = await source.read(tree.size + 1, PAGE);
      const first = page[0];
      if (!first || first.seq !== tree.size + 1) break;
      if (tree.size > 0 && first.prevHash !== lastLink) {
        restart();
        continue;
      }
      let gap = false;
      for (const e of page) {
        if (e.seq !== tree.size + 1) {
          gap = true;
          break;
        }
        tree.append(leafHash(auditLeaf(e.seq, e)));
        lastLink = e.hash;
      }
      if (gap || page.length < PAGE) break;
    }
    return { tree, size: tree.size };
  };

  return {
    // One catch-up at a time; callers that arrive meanwhile share it.
    sync() {
      running ??= catchUp().finally(() => {
        running = undefined;
      });
      return running;
    },
  };
}
