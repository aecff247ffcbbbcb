/**
 * `npm run audit:prove-verify -- --keys audit-keys.json proof.json [--consistency consistency.json]`:
 * checks, offline, an audit proof as GET /api/v2/procurement/orders/{id}/audit-proof returns it,
 * with nothing but the published public keys (the JWKS of /.well-known/audit-keys.json, or
 * `npm run audit:keys -- jwks`): the signed tree head, each entry's leaf and its inclusion
 * proof (RFC 9162). With --consistency, an operator's consistency proof
 * (GET /api/v2/operator/audit/consistency?first=<the proof's tree_size>) shows the log has only
 * grown since the proof's tree head. Exit 0 verified, 1 not, 2 usage or unreadable file.
 * With --authorization (GET …/orders/{id}/authorization), --business-keys and, for an order
 * with an AP2 mandate, --platform-keys (the business's and the platform's profiles, or JWKS
 * files), the whole chain of an authorized order: user mandate → platform key → merchant
 * signature → order → audit inclusion → signed tree head, and for an order that waited for
 * approval, the operators' decision signed by the business key, the policy's thresholds at the
 * order's amount, and the audit entry that names it (docs/ap2.md).
 * Reads no database, key ring or configuration (docs/audit-proofs.md).
 */
import '../lib/source-maps.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyAuditProof } from '../gateway/agent/audit/prove-verify.ts';
import { keysOf, verifyAuthorizedOrder } from '../gateway/agent/order/authorization-verify.ts';

const USAGE =
  'usage: npm run audit:prove-verify -- --keys <audit-keys.json> <proof.json> [--consistency <consistency.json>]\n' +
  '   or: npm run audit:prove-verify -- --keys <audit-keys.json> <proof.json> --authorization <authorization.json> --business-keys <ucp.json> [--platform-keys <platform-profile.json>]\n' +
  '       (--platform-keys is needed when the order carries an AP2 mandate)';

let files: {
  keys: unknown;
  proof: unknown;
  consistency?: unknown;
  authorization?: { evidence: unknown; platform: unknown; business: unknown };
};
try {
  const args = parseArgs({
    options: {
      keys: { type: 'string' },
      consistency: { type: 'string' },
      authorization: { type: 'string' },
      'platform-keys': { type: 'string' },
      'business-keys': { type: 'string' },
    },
    allowPositionals: true,
  });
  const [proofFile, ...rest] = args.positionals;
  if (!args.values.keys || !proofFile || rest.length > 0) throw new Error(USAGE);
  const v = args.values;
  const chain = [v.authorization, v['business-keys']];
  if ((chain.some(Boolean) || v['platform-keys']) && !chain.every(Boolean)) throw new Error(USAGE);
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as unknown;
  files = {
    keys: read(v.keys as string),
    proof: read(proofFile),
    ...(v.consistency ? { consistency: read(v.consistency) } : {}),
    ...(v.authorization
      ? {
          authorization: {
            evidence: read(v.authorization),
            platform: v['platform-keys'] ? read(v['platform-keys']) : [],
            business: read(v['business-keys'] as string),
          },
        }
      : {}),
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
if (verdict.ok && files.authorization) {
  const a = await verifyAuthorizedOrder({
    proof: files.proof,
    auditKeys: files.keys as Parameters<typeof verifyAuditProof>[1],
    evidence: files.authorization.evidence,
    platformKeys: keysOf(files.authorization.platform),
    businessKeys: keysOf(files.authorization.business),
  });
  if (a.ok && a.evidence)
    console.log(
      `authorized: order ${a.evidence.orderId} completes checkout ${String(a.evidence.checkout.id)}, confirmed at ${new Date(a.evidence.confirmedAt * 1000).toISOString()} for ${a.evidence.audience} in a mandate signed by platform key ${a.evidence.platformKid}, over the checkout the business signed with key ${a.evidence.merchantKid}; audit entry #${a.entrySeq} names the mandate`,
    );
  if (a.ok && a.approval) {
    const r = a.approval.record;
    const p = r.policy;
    const who = (r.decision === 'approved' ? r.approvals : r.rejection ? [r.rejection] : [])
      .map((x) => `${x.operator} at ${x.at}`)
      .join(' and ');
    console.log(
      `${r.decision}: order ${r.order_id} of ${r.amount} ${r.currency} ${r.decision} by ${who}, under policy ${p.subject} (approval above ${p.approval_above ?? '-'}${p.second_approval_above ? `, two above ${p.second_approval_above}` : ''} ${p.currency}: ${r.approvals_required} required), signed by business key ${a.approval.kid}; audit entry #${a.approvalEntrySeq} names the record`,
    );
  }
  if (!a.ok) console.error(`authorization NOT verified: ${a.problem}`);
  process.exitCode = a.ok ? 0 : 1;
}
