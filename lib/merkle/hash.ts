import { createHash } from 'node:crypto';

/**
 * Merkle tree hashing of RFC 9162 (Certificate Transparency v2), §2.1.1, with SHA-256:
 *
 *   MTH({})       = SHA-256()
 *   MTH({d(0)})   = SHA-256(0x00 ‖ d(0))                        (a leaf)
 *   MTH(D[n])     = SHA-256(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n]))    (a node)
 *
 * where k is the largest power of two smaller than n (k < n ≤ 2k). The two prefixes keep a leaf
 * from ever passing for a node (a second-preimage attack on the tree). Written by hand: no npm
 * package we found implements this tree (merkletreejs and the others build Bitcoin- or
 * Ethereum-style trees, without the prefixes or the unbalanced split, and none gives RFC 9162
 * consistency proofs); the whole of it is these few functions, tested against the published
 * vectors of Go's transparency-dev/merkle (test/merkle/vectors.json).
 */
export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** The hash of one leaf: SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
}

/** The hash of an interior node: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** The largest power of two smaller than n (n ≥ 2): the RFC's split point k. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * MTH of the leaves whose hashes are given, straight from the definition (recursive). The
 * reference the tests compare the cached tree with; O(n) hashes, so not for serving.
 */
export function rootOf(leafHashes: readonly Uint8Array[], start = 0, end = leafHashes.length): Buffer {
  const n = end - start;
  if (n === 0) return EMPTY_ROOT;
  if (n === 1) return Buffer.from(leafHashes[start] as Uint8Array);
  const k = splitPoint(n);
  return nodeHash(rootOf(leafHashes, start, start + k), rootOf(leafHashes, start + k, end));
}
