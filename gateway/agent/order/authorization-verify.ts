import type { JSONWebKeySet, JWK } from 'jose';
import { type EvidenceVerdict, verifyAuthorizationEvidence } from '../../../lib/ap2/evidence.ts';
import { orderIdOfSession } from '../../../subgraphs/procurement/checkout/session.ts';
import { type ProofVerdict, verifyAuditProof } from '../audit/prove-verify.ts';

/**
 * The whole chain of an authorized order, offline (docs/ap2.md; `npm run audit:prove-verify --
 * … --authorization`): user mandate → platform key → merchant signature → order → audit
 * inclusion → signed tree head. The evidence (GET …/orders/{id}/authorization) is checked with
 * the platform's and the business's public keys (lib/ap2/evidence.ts), the audit proof (GET
 * …/audit-proof) with the audit keys (./../audit/prove-verify.ts), and they are joined: the
 * same order, and an entry of it, proven in the signed log, whose reason names the mandate.
 */
export type AuthorizedOrderVerdict =
  | {
      readonly ok: true;
      readonly evidence: Extract<EvidenceVerdict, { ok: true }>;
      readonly proof: Extract<ProofVerdict, { ok: true }>;
      /** The audit entry (seq) that names the mandate. */
      readonly entrySeq: number;
    }
  | { readonly ok: false; readonly problem: string };

/** A key file as given: a profile (`signing_keys`), a JWKS (`keys`) or a list of JWKs. */
export const keysOf = (doc: unknown): JWK[] => {
  const d = doc as { signing_keys?: unknown; keys?: unknown } | null;
  const list = Array.isArray(doc) ? doc : (d?.signing_keys ?? d?.keys);
  return Array.isArray(list) ? (list as JWK[]) : [];
};

export async function verifyAuthorizedOrder(o: {
  readonly proof: unknown;
  readonly auditKeys: JSONWebKeySet;
  readonly evidence: unknown;
  readonly platformKeys: readonly JWK[];
  readonly businessKeys: readonly JWK[];
}): Promise<AuthorizedOrderVerdict> {
  const evidence = await verifyAuthorizationEvidence(
    o.evidence,
    { platform: o.platformKeys as Record<string, unknown>[], business: o.businessKeys },
    orderIdOfSession,
  );
  if (!evidence.ok) return { ok: false, problem: `authorization: ${evidence.problem}` };
  const proof = await verifyAuditProof(o.proof, o.auditKeys);
  if (!proof.ok) return { ok: false, problem: `audit proof: ${proof.problem}` };
  if (proof.orderId !== evidence.orderId)
    return { ok: false, problem: `the audit proof is of order ${proof.orderId}, not ${evidence.orderId}` };
  // The entries' reasons were checked against their leaves by verifyAuditProof.
  const entries = (o.proof as { entries: { seq: number; reason?: unknown }[] }).entries;
  const named = entries.find((e) => typeof e.reason === 'string' && e.reason.includes(evidence.auditReason));
  if (!named)
    return {
      ok: false,
      problem: `no audit entry of order ${evidence.orderId} names the mandate (${evidence.auditReason})`,
    };
  return { ok: true, evidence, proof, entrySeq: named.seq };
}
