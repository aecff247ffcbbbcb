import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { leafHash, verifyConsistency, verifyInclusion } from '../../../lib/merkle/index.ts';
import { type TreeHeadClaims, verifyTreeHead } from './tree-head.ts';

/**
 * The offline check of an audit proof (docs/audit-proofs.md, `npm run audit:prove-verify`):
 * with nothing but the published public keys (the JWKS at /.well-known/audit-keys.json), that
 * 1. the tree head's signature verifies (ES256, typ audit-tree-head+jws, our issuer);
 * 2. each entry's leaf is the entry shown (its seq, time, trace id, method, path, status,
 *    reason) and names the proof's order, and its leaf index is its seq - 1;
 * 3. each inclusion path leads from SHA-256(0x00 ‖ leaf) to the signed root (RFC 9162 §2.1.3.2);
 * and, given a consistency proof from the operator, that its tree head verifies too and that
 * the tree the proof was made in is a prefix of it (§2.1.4.2): nothing was changed or removed.
 */
export type ProofVerdict =
  | {
      readonly ok: true;
      readonly orderId: string;
      readonly head: TreeHeadClaims;
      readonly entries: readonly { readonly seq: number; readonly method: string; readonly status: number }[];
      /** The later head the proof's tree was shown consistent with, when one was given. */
      readonly consistentWith?: TreeHeadClaims;
    }
  | { readonly ok: false; readonly problem: string };

type Json = Record<string, unknown>;
const HEX = /^[0-9a-f]{64}$/;
const bytes = (h: unknown) => (typeof h === 'string' && HEX.test(h) ? Buffer.from(h, 'hex') : undefined);

const hashes = (v: unknown): Uint8Array[] | undefined => {
  if (!Array.isArray(v)) return undefined;
  const out: Uint8Array[] = [];
  for (const h of v) {
    const b = bytes(h);
    if (!b) return undefined;
    out.push(b);
  }
  return out;
};

async function headOf(head: unknown, jwks: JSONWebKeySet, what: string): Promise<TreeHeadClaims> {
  try {
    return await verifyTreeHead(head, createLocalJWKSet(jwks));
  } catch (err) {
    throw new Error(
      `${what}: the signed tree head does not verify (${err instanceof Error ? err.message : err})`,
    );
  }
}

/** Checks one entry against its leaf and its inclusion path; the reason when it fails. */
function entryProblem(e: Json, orderId: string, head: TreeHeadClaims, root: Buffer): string | undefined {
  const seq = e.seq;
  const where = `entry ${String(seq)}`;
  if (typeof e.leaf !== 'string') return `${where}: no leaf`;
  let leaf: unknown[];
  try {
    leaf = JSON.parse(e.leaf) as unknown[];
  } catch {
    return `${where}: the leaf is not JSON`;
  }
  if (!Array.isArray(leaf) || (leaf.length !== 9 && leaf.length !== 11))
    return `${where}: the leaf is not an audit entry`;
  const [lseq, at, traceId, method, path, status, , , reason] = leaf;
  if (lseq !== seq || e.leaf_index !== (seq as number) - 1)
    return `${where}: its leaf index is not its seq - 1`;
  if (leaf[10] !== orderId) return `${where}: the leaf names another order (${String(leaf[10])})`;
  const shown = { at: new Date(at as number).toISOString(), trace_id: traceId, method, path, status, reason };
  for (const [k, v] of Object.entries(shown))
    if (e[k] !== v)
      return `${where}: ${k} shown (${JSON.stringify(e[k])}) is not the one in its leaf (${JSON.stringify(v)})`;
  const path_ = hashes(e.inclusion_path);
  if (!path_) return `${where}: the inclusion path is not a list of SHA-256 hashes in hex`;
  if (!verifyInclusion(e.leaf_index as number, head.tree_size, leafHash(e.leaf), path_, root))
    return `${where}: its inclusion proof does not lead to the signed root of the tree of ${head.tree_size} (the entry or the proof was changed)`;
  return undefined;
}

export async function verifyAuditProof(
  proof: unknown,
  jwks: JSONWebKeySet,
  consistency?: unknown,
): Promise<ProofVerdict> {
  try {
    const p = proof as Json | null;
    if (!p || typeof p.order_id !== 'string' || !Array.isArray(p.entries))
      return { ok: false, problem: 'not an audit proof (order_id, entries and tree_head expected)' };
    const head = await headOf(p.tree_head, jwks, 'the proof');
    const root = Buffer.from(head.root_hash, 'hex');
    if (p.entries.length === 0) return { ok: false, problem: 'the proof carries no entry of the order' };
    for (const e of p.entries as Json[]) {
      const problem = entryProblem(e, p.order_id, head, root);
      if (problem) return { ok: false, problem };
    }
    const entries = (p.entries as Json[]).map((e) => ({
      seq: e.seq as number,
      method: e.method as string,
      status: e.status as number,
    }));
    if (consistency === undefined) return { ok: true, orderId: p.order_id, head, entries };
    const c = consistency as Json | null;
    const later = await headOf(c?.tree_head, jwks, 'the consistency proof');
    const path = hashes(c?.consistency_path);
    if (!c || !path)
      return { ok: false, problem: 'not a consistency proof (consistency_path of hex hashes expected)' };
    if (c.first !== head.tree_size || c.second !== later.tree_size)
      return {
        ok: false,
        problem: `the consistency proof is from ${String(c.first)} to ${String(c.second)}, not from the proof's tree of ${head.tree_size} to its signed head of ${later.tree_size}`,
      };
    if (!verifyConsistency(head.tree_size, later.tree_size, root, Buffer.from(later.root_hash, 'hex'), path))
      return {
        ok: false,
        problem: `the tree of ${later.tree_size} entries is not an extension of the tree of ${head.tree_size} the proof was made in: entries were changed or removed`,
      };
    return { ok: true, orderId: p.order_id, head, entries, consistentWith: later };
  } catch (err) {
    return { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
}
