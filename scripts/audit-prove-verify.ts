/**
 * `npm run audit:prove-verify -- --keys audit-keys.json proof.json [--consistency consistency.json]`:
 * checks, offline, an audit proof as GET /api/v2/procurement/orders/{id}/audit-proof returns it,
 * with nothing but the published public keys (the JWKS of /.well-known/audit-keys.json, or
 * `npm run audit:keys -- jwks`): the signed tree head, each entry's leaf and its inclusion
 * proof (RFC 9162). With --consistency, an operator's consistency proof
 * (GET /api/v2/operator/audit/consistency?first=<the proof's tree_size>) shows the log has only
 * grown since the proof's tree head. Exit 0 verified, 1 not, 2 usage or unreadable file.
 * Reads no database, key ring or configuration (docs/audit-proofs.md).
 */
import '../lib/source-maps.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyAuditProof } from '../gateway/agent/audit/prove-verify.ts';

const USAGE =
  'usage: npm run audit:prove-verify -- --keys <audit-keys.json> <proof.json> [--consistency <consistency.json>]';

let files: { keys: unknown; proof: unknown; consistency?: unknown };
try {
  const args = parseArgs({
    options: { keys: { type: 'string' }, consistency: { type: 'string' } },
    allowPositionals: true,
  });
  const [proofFile, ...rest] = args.positionals;
  if (!args.values.keys || !proofFile || rest.length > 0) throw new Error(USAGE);
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as unknown;
  files = {
    keys: read(args.values.keys),
    proof: read(proofFile),
    ...(args.values.consistency ? { consistency: read(args.values.consistency) } : {}),
  };
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(2);
}
const verdict = await verifyAuditProof(
  files.proof,
  files.keys as Parameters<typeof verifyAuditProof>[1],
  files.consistency,
);
if (verdict.ok) {
  const h = verdict.head;
  console.log(
    `audit proof verified: order ${verdict.orderId}, ${verdict.entries.length} entries (${verdict.entries
      .map((e) => `#${e.seq} ${e.method} ${e.status}`)
      .join(
        ', ',
      )}) are in the audit log of ${h.tree_size} entries whose root ${h.root_hash} was signed at ${new Date(h.timestamp).toISOString()}`,
  );
  if (verdict.consistentWith)
    console.log(
      `consistent: the log of ${verdict.consistentWith.tree_size} entries signed at ${new Date(verdict.consistentWith.timestamp).toISOString()} extends it (nothing changed or removed)`,
    );
} else console.error(`audit proof NOT verified: ${verdict.problem}`);
process.exitCode = verdict.ok ? 0 : 1;
