import { splitPoint } from './hash.ts';

/** MTH(D[start:end]) for 0 ≤ start < end ≤ size: where the proofs read subtree hashes from. */
export type SubtreeHash = (start: number, end: number) => Uint8Array;

/**
 * PATH(m, D[n]) of RFC 9162 §2.1.3.1: the audit path of leaf m in the tree of the first n
 * leaves, from the leaf's sibling up to the root's child. Iterative form of the recursion:
 *
 *   PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n])      for m < k
 *   PATH(m, D[n]) = PATH(m - k, D[k:n]) : MTH(D[0:k])  for m ≥ k
 *
 * The recursion descends from the root, so its elements are collected and then reversed.
 */
export function inclusionPath(m: number, n: number, hash: SubtreeHash): Uint8Array[] {
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n) || m < 0 || m >= n)
    throw new RangeError(`no leaf ${m} in a tree of ${n}`);
  const path: Uint8Array[] = [];
  let start = 0;
  let end = n;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m - start < k) {
      path.push(hash(start + k, end));
      end = start + k;
    } else {
      path.push(hash(start, start + k));
      start += k;
    }
  }
  return path.reverse();
}

/**
 * PROOF(m, D[n]) of RFC 9162 §2.1.4.1 for 0 < m < n: the consistency proof between the tree of
 * the first m leaves and the tree of the first n (empty when m = n), built by SUBPROOF:
 *
 *   SUBPROOF(m, D[m], true)  = {}
 *   SUBPROOF(m, D[m], false) = {MTH(D[m])}
 *   SUBPROOF(m, D[n], b)     = SUBPROOF(m, D[0:k], b) : MTH(D[k:n])          for m ≤ k
 *   SUBPROOF(m, D[n], b)     = SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k])  for m > k
 */
export function consistencyProof(m: number, n: number, hash: SubtreeHash): Uint8Array[] {
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n) || m < 1 || m > n)
    throw new RangeError(`no consistency proof from ${m} to ${n}`);
  const proof: Uint8Array[] = [];
  let start = 0;
  let end = n;
  let complete = true;
  let mm = m;
  while (mm !== end - start) {
    const k = splitPoint(end - start);
    if (mm <= k) {
      proof.push(hash(start + k, end));
      end = start + k;
    } else {
      proof.push(hash(start, start + k));
      start += k;
      mm -= k;
      complete = false;
    }
  }
  if (!complete) proof.push(hash(start, end));
  return proof.reverse();
}
