import { HASH_SIZE, nodeHash } from './hash.ts';

const equal = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
const wellFormed = (hashes: readonly Uint8Array[]) => hashes.every((h) => h.length === HASH_SIZE);
const sizeOk = (n: number) => Number.isSafeInteger(n) && n >= 0;

/**
 * RFC 9162 §2.1.3.2, verifying an inclusion proof: does `leaf` (a leaf hash) sit at `index` in
 * the tree of `size` leaves whose root is `root`? Step by step as the RFC writes it (fn, sn, r).
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  path: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  // 1. leaf_index must be below tree_size.
  if (!sizeOk(index) || !sizeOk(size) || index >= size) return false;
  if (leaf.length !== HASH_SIZE || root.length !== HASH_SIZE || !wellFormed(path)) return false;
  // 2.–3. fn = leaf_index, sn = tree_size - 1, r = hash. (Numbers, not bit operators: sizes
  // beyond 2^31 stay exact.)
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = leaf;
  const lsb = (x: number) => x % 2 === 1;
  const half = (x: number) => Math.floor(x / 2);
  // 4. For each p in the path.
  for (const p of path) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!lsb(fn))
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else r = nodeHash(r, p);
    fn = half(fn);
    sn = half(sn);
  }
  // 5. sn must be 0 and r the root.
  return sn === 0 && equal(r, root);
}

/**
 * RFC 9162 §2.1.4.2, verifying a consistency proof: is the tree of `second` leaves with root
 * `secondRoot` an extension of the tree of `first` leaves with root `firstRoot`? Equal sizes
 * are consistent when the roots are equal and the proof empty; the empty tree is a prefix of
 * every tree (with an empty proof), as in transparency-dev/merkle.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!sizeOk(first) || !sizeOk(second) || first > second) return false;
  if (!wellFormed(proof)) return false;
  if (first === second) return proof.length === 0 && equal(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  if (firstRoot.length !== HASH_SIZE || secondRoot.length !== HASH_SIZE) return false;
  // 1. An empty path fails.
  if (proof.length === 0) return false;
  // 2. When first is an exact power of two, first_hash is prepended.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  const lsb = (x: number) => x % 2 === 1;
  const half = (x: number) => Math.floor(x / 2);
  // 3. fn = first - 1, sn = second - 1.
  let fn = first - 1;
  let sn = second - 1;
  // 4. While LSB(fn) is set, shift both right.
  while (lsb(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // 5. fr = sr = the first value.
  let fr: Uint8Array = path[0] as Uint8Array;
  let sr: Uint8Array = fr;
  // 6. For each subsequent value c.
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!lsb(fn))
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else sr = nodeHash(sr, c);
    fn = half(fn);
    sn = half(sn);
  }
  // 7. fr must be first_hash, sr second_hash, and sn 0.
  return sn === 0 && equal(fr, firstRoot) && equal(sr, secondRoot);
}

function isPowerOfTwo(n: number): boolean {
  let x = n;
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
}
