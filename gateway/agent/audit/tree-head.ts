import { type CompactVerifyGetKey, compactVerify } from 'jose';
import { type QuoteKeys, signJws } from '../../../lib/quote-token/index.ts';
import { CHECKPOINT_ISSUER } from './checkpoint.ts';

/**
 * The signed tree head of the audit's Merkle tree (RFC 9162 §4.10, TreeHeadDataV2: timestamp,
 * tree_size, root_hash), as an ES256 compact JWS made with the audit checkpoint key ring (the
 * key that signs head.jws, published as a JWKS at AUDIT_KEYS_PATH). Its own `typ`, so a tree
 * head and a chain checkpoint can never pass for each other.
 */
export const TREE_HEAD_TYP = 'audit-tree-head+jws';
/** Where the checkpoint and tree head public keys are published (a JWKS, no authentication). */
export const AUDIT_KEYS_PATH = '/.well-known/audit-keys.json';

export interface TreeHeadClaims {
  readonly iss: string;
  readonly tree_size: number;
  /** MTH of entries 1…tree_size, 64 lowercase hex digits. */
  readonly root_hash: string;
  /** Epoch ms of signing. */
  readonly timestamp: number;
}

/** A signed tree head as the API returns it: the claims, and the JWS that signs exactly them. */
export interface SignedTreeHead extends Omit<TreeHeadClaims, 'iss'> {
  readonly signature: string;
}

export function signTreeHead(
  keys: Pick<QuoteKeys, 'signingKey'>,
  head: { treeSize: number; rootHash: Uint8Array; timestamp: number },
): SignedTreeHead {
  const claims: TreeHeadClaims = {
    iss: CHECKPOINT_ISSUER,
    tree_size: head.treeSize,
    root_hash: Buffer.from(head.rootHash).toString('hex'),
    timestamp: head.timestamp,
  };
  return {
    tree_size: claims.tree_size,
    root_hash: claims.root_hash,
    timestamp: claims.timestamp,
    signature: signJws(keys, TREE_HEAD_TYP, claims),
  };
}

const ROOT = /^[0-9a-f]{64}$/;

/**
 * Verifies a signed tree head with the published keys and returns its claims; throws with the
 * reason when the signature, the type or the claims are wrong, or when the fields shown beside
 * the signature differ from what it signs.
 */
export async function verifyTreeHead(head: unknown, key: CompactVerifyGetKey): Promise<TreeHeadClaims> {
  const h = head as Partial<SignedTreeHead> | null;
  if (!h || typeof h.signature !== 'string') throw new Error('the tree head has no signature');
  const { payload, protectedHeader } = await compactVerify(h.signature, key, {
    algorithms: ['ES256'],
  });
  if (protectedHeader.typ !== TREE_HEAD_TYP) throw new Error(`not a tree head (typ ${protectedHeader.typ})`);
  const c = JSON.parse(Buffer.from(payload).toString('utf8')) as Partial<TreeHeadClaims>;
  const size = c.tree_size;
  if (
    c.iss !== CHECKPOINT_ISSUER ||
    !Number.isSafeInteger(size) ||
    (size as number) < 0 ||
    !ROOT.test(String(c.root_hash)) ||
    !Number.isSafeInteger(c.timestamp)
  )
    throw new Error('the signed claims are not a tree head');
  if (h.tree_size !== c.tree_size || h.root_hash !== c.root_hash || h.timestamp !== c.timestamp)
    throw new Error('the tree head fields differ from what its signature signs');
  return c as TreeHeadClaims;
}
