export { EMPTY_ROOT, HASH_SIZE, leafHash, nodeHash, rootOf, splitPoint } from './hash.ts';
export { consistencyProof, inclusionPath, type SubtreeHash } from './proof.ts';
export { MerkleTree } from './tree.ts';
export { verifyConsistency, verifyInclusion } from './verify.ts';
