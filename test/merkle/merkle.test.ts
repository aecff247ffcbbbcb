/**
 * RFC 9162 Merkle hashing, proofs and their verification (lib/merkle): the published vectors of
 * Go's transparency-dev/merkle (vectors.json, with their corruption probes), and properties
 * over every leaf and size up to ~200 against the recursive definition.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionPath,
  leafHash,
  MerkleTree,
  nodeHash,
  rootOf,
  verifyConsistency,
  verifyInclusion,
} from '../../lib/merkle/index.ts';

interface Vectors {
  hasher: {
    emptyRoot: string;
    emptyLeaf: string;
    leaf: { data: string; hash: string };
    node: { left: string; right: string; hash: string };
  };
  leaves: string[];
  roots: string[];
  inclusionProofs: { leaf: number; size: number; proof: string[] }[];
  consistencyProofs: { size1: number; size2: number; proof: string[] }[];
}

const v = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8')) as Vectors;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bin = (h: string) => Buffer.from(h, 'hex');
const leafHashes = v.leaves.map((l) => leafHash(bin(l)));
const treeOf = (hashes: readonly Uint8Array[]) => {
  const t = new MerkleTree();
  for (const h of hashes) t.append(h);
  return t;
};
const SOME_HASH = bin('abacaba000000000000000000000000000000000000000000060061e00123456');
const flip = (h: Uint8Array, bit: number) => {
  const c = Buffer.from(h);
  c[bit >> 3] = (c[bit >> 3] as number) ^ (1 << (bit & 7));
  return c;
};

describe('RFC 9162 hashing (vectors of transparency-dev/merkle)', () => {
  it('hashes the empty tree, an empty leaf, a leaf and a node with the 0x00 and 0x01 prefixes', () => {
    expect(hex(EMPTY_ROOT)).toBe(v.hasher.emptyRoot);
    expect(hex(leafHash(new Uint8Array()))).toBe(v.hasher.emptyLeaf);
    expect(hex(leafHash(bin(v.hasher.leaf.data)))).toBe(v.hasher.leaf.hash);
    expect(hex(nodeHash(bin(v.hasher.node.left), bin(v.hasher.node.right)))).toBe(v.hasher.node.hash);
  });

  it('computes the published root of every tree of the first 1 to 8 leaves, by definition and cached', () => {
    const t = new MerkleTree();
    leafHashes.forEach((h, i) => {
      t.append(h);
      expect(hex(rootOf(leafHashes.slice(0, i + 1)))).toBe(v.roots[i]);
      expect(hex(t.root())).toBe(v.roots[i]);
    });
    for (let size = 1; size <= 8; size++) expect(hex(t.root(size))).toBe(v.roots[size - 1]);
  });

  it.each(v.inclusionProofs.map((p) => [p.leaf, p.size, p] as const))(
    'gives and verifies the published inclusion proof of leaf %i in a tree of %i',
    (_leaf, _size, p) => {
      const t = treeOf(leafHashes);
      expect(t.inclusion(p.leaf - 1, p.size).map(hex)).toEqual(p.proof);
      const root = bin(v.roots[p.size - 1] as string);
      const leaf = leafHashes[p.leaf - 1] as Buffer;
      const proof = p.proof.map(bin);
      expect(verifyInclusion(p.leaf - 1, p.size, leaf, proof, root)).toBe(true);
      // The corruptions of the Go test (corruptInclusionProof): each must fail.
      const probes: [string, number, number, Uint8Array, Uint8Array[], Uint8Array][] = [
        ['index - 1', p.leaf - 2, p.size, leaf, proof, root],
        ['index + 1', p.leaf, p.size, leaf, proof, root],
        ['index ^ 2', (p.leaf - 1) ^ 2, p.size, leaf, proof, root],
        ['size * 2', p.leaf - 1, p.size * 2, leaf, proof, root],
        ['size / 2', p.leaf - 1, Math.floor(p.size / 2), leaf, proof, root],
        ['wrong leaf', p.leaf - 1, p.size, Buffer.from('WrongLeaf'), proof, root],
        ['empty root', p.leaf - 1, p.size, leaf, proof, EMPTY_ROOT],
        ['random root', p.leaf - 1, p.size, leaf, proof, SOME_HASH],
        ['trailing garbage', p.leaf - 1, p.size, leaf, [...proof, Buffer.alloc(0)], root],
        ['trailing root', p.leaf - 1, p.size, leaf, [...proof, root], root],
        ['preceding garbage', p.leaf - 1, p.size, leaf, [Buffer.alloc(0), ...proof], root],
        ['preceding root', p.leaf - 1, p.size, leaf, [root, ...proof], root],
        ...proof.map(
          (_, i) =>
            [
              `proof[${i}] bit 3`,
              p.leaf - 1,
              p.size,
              leaf,
              proof.map((h, j) => (j === i ? flip(h, 3) : h)),
              root,
            ] as [string, number, number, Uint8Array, Uint8Array[], Uint8Array],
        ),
        ...(proof.length > 0
          ? [['removed component', p.leaf - 1, p.size, leaf, proof.slice(0, -1), root] as const]
          : []),
        ...(proof.length > 1
          ? [
              [
                'inserted component',
                p.leaf - 1,
                p.size,
                leaf,
                [proof[0] as Buffer, SOME_HASH, ...proof.slice(1)],
                root,
              ] as const,
            ]
          : []),
      ] as [string, number, number, Uint8Array, Uint8Array[], Uint8Array][];
      // A one-leaf tree's root is its leaf: a "wrong" root or leaf of that tree alone is still
      // caught, the index and size probes are what the Go test skips there too.
      for (const [what, index, size, l, pr, r] of probes) {
        if (p.size === 1 && (what === 'size / 2' || what === 'index - 1')) continue;
        expect(verifyInclusion(index, size, l, pr, r), what).toBe(false);
      }
    },
  );

  it.each(v.consistencyProofs.map((p) => [p.size1, p.size2, p] as const))(
    'gives and verifies the published consistency proof from %i to %i',
    (_a, _b, p) => {
      const t = treeOf(leafHashes);
      expect(t.consistency(p.size1, p.size2).map(hex)).toEqual(p.proof);
      const r1 = bin(v.roots[p.size1 - 1] as string);
      const r2 = bin(v.roots[p.size2 - 1] as string);
      const proof = p.proof.map(bin);
      expect(verifyConsistency(p.size1, p.size2, r1, r2, proof)).toBe(true);
      if (proof.length === 0) return;
      // The corruptions of the Go test (corruptConsistencyProof): each must fail.
      const probes: [string, number, number, Uint8Array, Uint8Array, Uint8Array[]][] = [
        ['size1 - 1', p.size1 - 1, p.size2, r1, r2, proof],
        ['size1 + 1', p.size1 + 1, p.size2, r1, r2, proof],
        ['size1 ^ 2', p.size1 ^ 2, p.size2, r1, r2, proof],
        ['size2 * 2', p.size1, p.size2 * 2, r1, r2, proof],
        ['size2 / 2', p.size1, Math.floor(p.size2 / 2), r1, r2, proof],
        ['wrong root1', p.size1, p.size2, Buffer.from('WrongRoot'), r2, proof],
        ['wrong root2', p.size1, p.size2, r1, Buffer.from('WrongRoot'), proof],
        ['swapped roots', p.size1, p.size2, r2, r1, proof],
        ['empty proof', p.size1, p.size2, r1, r2, []],
        ['trailing garbage', p.size1, p.size2, r1, r2, [...proof, Buffer.alloc(0)]],
        ['trailing root1', p.size1, p.size2, r1, r2, [...proof, r1]],
        ['trailing root2', p.size1, p.size2, r1, r2, [...proof, r2]],
        ['preceding garbage', p.size1, p.size2, r1, r2, [Buffer.alloc(0), ...proof]],
        ['preceding root1', p.size1, p.size2, r1, r2, [r1, ...proof]],
        ['preceding root2', p.size1, p.size2, r1, r2, [r2, ...proof]],
        ['preceding proof[0]', p.size1, p.size2, r1, r2, [proof[0] as Buffer, ...proof]],
        ['truncated proof', p.size1, p.size2, r1, r2, proof.slice(0, -1)],
        ...proof.map(
          (_, i) =>
            [
              `proof[${i}] bit 4`,
              p.size1,
              p.size2,
              r1,
              r2,
              proof.map((h, j) => (j === i ? flip(h, 4) : h)),
            ] as [string, number, number, Uint8Array, Uint8Array, Uint8Array[]],
        ),
      ];
      for (const [what, a, b, x, y, pr] of probes)
        expect(verifyConsistency(a, b, x, y, pr), what).toBe(false);
    },
  );

  it('treats the edge cases as transparency-dev/merkle does (TestVerifyConsistency, TestVerifyInclusion)', () => {
    const r1 = Buffer.from("don't care 1");
    const r2 = Buffer.from("don't care 2");
    const table: [number, number, Uint8Array, Uint8Array, Uint8Array[], boolean][] = [
      [0, 0, r1, r2, [], false],
      [1, 1, r1, r2, [], false],
      [0, 0, r1, r1, [], true],
      [0, 1, r1, r2, [], true],
      [1, 1, r2, r2, [], true],
      [1, 0, r1, r2, [], false],
      [2, 1, r1, r2, [], false],
      [1, 2, r1, r2, [], false],
      [0, 0, EMPTY_ROOT, r2, [], false],
      [1, 1, EMPTY_ROOT, r2, [], false],
      [0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT], false],
      [0, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT], false],
      [1, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT], false],
    ];
    for (const [a, b, x, y, pr, ok] of table) expect(verifyConsistency(a, b, x, y, pr), `${a}→${b}`).toBe(ok);
    for (const [index, size] of [
      [0, 0],
      [0, 1],
      [1, 0],
      [2, 1],
    ] as const) {
      expect(verifyInclusion(index, size, SOME_HASH, [], Buffer.alloc(0))).toBe(false);
      expect(verifyInclusion(index, size, Buffer.alloc(0), [], EMPTY_ROOT)).toBe(false);
      expect(verifyInclusion(index, size, SOME_HASH, [], EMPTY_ROOT)).toBe(false);
    }
    const one = leafHash(Buffer.from('data'));
    expect(verifyInclusion(0, 1, one, [], one)).toBe(true);
    expect(verifyInclusion(0, 1, Buffer.alloc(0), [], one)).toBe(false);
  });
});

describe('the cached tree against the definition (fast-check)', () => {
  const leavesArb = fc.array(fc.uint8Array({ maxLength: 12 }), { minLength: 1, maxLength: 200 });

  it('every inclusion proof of every leaf of every prefix verifies, and equals the recursive PATH', () => {
    fc.assert(
      fc.property(leavesArb, (leaves) => {
        const hashes = leaves.map((l) => leafHash(l));
        const t = treeOf(hashes);
        const subtree = (s: number, e: number) => rootOf(hashes, s, e);
        // Every size would be O(n³) hashes per run: the full tree and a few prefixes.
        for (const size of new Set([hashes.length, 1, Math.ceil(hashes.length / 2), hashes.length - 1])) {
          if (size < 1) continue;
          const root = t.root(size);
          expect(hex(root)).toBe(hex(rootOf(hashes.slice(0, size))));
          for (let i = 0; i < size; i++) {
            const path = t.inclusion(i, size);
            expect(path.map(hex)).toEqual(inclusionPath(i, size, subtree).map(hex));
            expect(verifyInclusion(i, size, hashes[i] as Buffer, path, root)).toBe(true);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a proof with any one bit flipped, or for another leaf, fails', () => {
    fc.assert(
      fc.property(
        leavesArb.filter((l) => l.length >= 2),
        fc.nat(),
        fc.nat(),
        fc.nat(255),
        (leaves, i0, which, bit) => {
          const hashes = leaves.map((l) => leafHash(l));
          const t = treeOf(hashes);
          const i = i0 % hashes.length;
          const path = t.inclusion(i);
          const root = t.root();
          const leaf = hashes[i] as Buffer;
          const j = which % path.length;
          const flipped = path.map((h, k) => (k === j ? flip(h, bit) : h));
          expect(verifyInclusion(i, hashes.length, leaf, flipped, root)).toBe(false);
          expect(verifyInclusion(i, hashes.length, flip(leaf, bit), path, root)).toBe(false);
          expect(verifyInclusion(i, hashes.length, leaf, path, flip(root, bit))).toBe(false);
          const other = (i + 1) % hashes.length;
          if (!(hashes[other] as Buffer).equals(leaf))
            expect(verifyInclusion(i, hashes.length, hashes[other] as Buffer, path, root)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the consistency proof of every m ≤ n verifies, equals the recursive PROOF, and fails for another history', () => {
    fc.assert(
      fc.property(leavesArb, fc.nat(), fc.nat(255), (leaves, cut, bit) => {
        const hashes = leaves.map((l) => leafHash(l));
        const t = treeOf(hashes);
        const n = hashes.length;
        const subtree = (s: number, e: number) => rootOf(hashes, s, e);
        for (let m = 1; m <= n; m++) {
          const proof = t.consistency(m, n);
          expect(proof.map(hex)).toEqual(consistencyProof(m, n, subtree).map(hex));
          expect(verifyConsistency(m, n, t.root(m), t.root(n), proof)).toBe(true);
        }
        // A rewritten history: leaf `c` changed, so every tree of more than c leaves differs.
        const c = cut % n;
        const other = treeOf(hashes.map((h, k) => (k === c ? flip(h, bit) : h)));
        for (let m = c + 1; m < n; m++)
          expect(verifyConsistency(m, n, t.root(m), other.root(n), other.consistency(m, n))).toBe(false);
      }),
      { numRuns: 40 },
    );
  });

  it('refuses proofs it cannot give: a leaf or size beyond the tree, a size below 1', () => {
    const t = treeOf(leafHashes);
    expect(() => t.inclusion(8, 8)).toThrow(RangeError);
    expect(() => t.inclusion(0, 9)).toThrow(RangeError);
    expect(() => t.consistency(0, 8)).toThrow(RangeError);
    expect(() => t.consistency(5, 4)).toThrow(RangeError);
    expect(() => t.root(9)).toThrow(RangeError);
    expect(() => t.append(Buffer.alloc(31))).toThrow(RangeError);
  });
});
