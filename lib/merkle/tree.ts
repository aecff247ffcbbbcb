import { HASH_SIZE, nodeHash, rootOf, splitPoint } from './hash.ts';
import { consistencyProof, inclusionPath } from './proof.ts';

/** A growable array of 32-byte hashes in one buffer (no object per hash). */
class HashArray {
  private bytes = new Uint8Array(HASH_SIZE * 64);
  length = 0;

  push(h: Uint8Array): void {
    if ((this.length + 1) * HASH_SIZE > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(h, this.length * HASH_SIZE);
    this.length++;
  }

  at(i: number): Uint8Array {
    return this.bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE);
  }
}

/**
 * An append-only Merkle tree (RFC 9162) that keeps the hash of every complete, aligned subtree:
 * level l holds MTH of leaves [i·2^l, (i+1)·2^l) for each i whose subtree is full. That is
 * about 2n hashes (64 bytes a leaf). Every subtree the RFC's recursion asks for is either one of
 * those (the left part of every split is) or the right edge of the tree, built from O(log n) of
 * them, so a root, an inclusion path or a consistency proof costs O(log² n) hashes at most,
 * whatever the tree's size. Appending a leaf costs one hash per completed level (amortised 2).
 */
export class MerkleTree {
  private readonly levels: HashArray[] = [new HashArray()];

  /** Number of leaves. */
  get size(): number {
    return (this.levels[0] as HashArray).length;
  }

  /** Appends a leaf hash (SHA-256(0x00 ‖ leaf), see leafHash). */
  append(leafHash: Uint8Array): void {
    if (leafHash.length !== HASH_SIZE) throw new RangeError('a leaf hash is 32 bytes');
    let level = 0;
    let h = leafHash;
    for (;;) {
      const row = this.levels[level] as HashArray;
      row.push(h);
      const i = row.length - 1;
      // A right child completes its parent.
      if (i % 2 === 0) return;
      h = nodeHash(row.at(i - 1), h);
      level++;
      if (!this.levels[level]) this.levels.push(new HashArray());
    }
  }

  /** MTH(D[start:end]) of leaves already appended. */
  readonly subtree = (start: number, end: number): Uint8Array => {
    const n = end - start;
    if (!(start >= 0 && n >= 1 && end <= this.size)) throw new RangeError(`no subtree [${start}, ${end})`);
    // A full aligned subtree is stored.
    if ((n & (n - 1)) === 0 && start % n === 0) {
      const level = Math.log2(n);
      return (this.levels[level] as HashArray).at(start / n);
    }
    const k = splitPoint(n);
    return nodeHash(this.subtree(start, start + k), this.subtree(start + k, end));
  };

  /** MTH of the first `size` leaves (the whole tree by default). */
  root(size = this.size): Uint8Array {
    if (!(Number.isSafeInteger(size) && size >= 0 && size <= this.size))
      throw new RangeError(`no tree of ${size} leaves (the tree has ${this.size})`);
    return size === 0 ? rootOf([]) : this.subtree(0, size);
  }

  /** PATH(index, D[size]). */
  inclusion(index: number, size = this.size): Uint8Array[] {
    if (size > this.size) throw new RangeError(`no tree of ${size} leaves (the tree has ${this.size})`);
    return inclusionPath(index, size, this.subtree);
  }

  /** PROOF(first, D[second]) for 0 < first ≤ second ≤ size. */
  consistency(first: number, second = this.size): Uint8Array[] {
    if (second > this.size) throw new RangeError(`no tree of ${second} leaves (the tree has ${this.size})`);
    return consistencyProof(first, second, this.subtree);
  }
}
