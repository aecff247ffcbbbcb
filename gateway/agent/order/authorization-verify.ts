import type { JSONWebKeySet, JWK } from 'jose';
import { type ApprovalRecordVerdict, verifyApprovalRecord } from '../../../lib/ap2/approval-record.ts';
import { type EvidenceVerdict, verifyAuthorizationEvidence } from '../../../lib/ap2/evidence.ts';
import { orderIdOfSession } from '../../../subgraphs/procurement/checkout/session.ts';
import { approvalAuditReason } from '../../../subgraphs/procurement/domain/approval-record.ts';
import { type ProofVerdict, verifyAuditProof } from '../audit/prove-verify.ts';

/**
 * The whole chain of an authorized order, offline (docs/ap2.md; `npm run audit:prove-verify --
 * … --authorization`): user mandate → platform key → merchant signature → order → audit
 * inclusion → signed tree head, and for an order that waited, the operators' approval → business
 * key → the policy's thresholds at the order's amount → audit inclusion. The evidence (GET
 * …/orders/{id}/authorization) is checked with the platform's and the business's public keys
 * (lib/ap2/evidence.ts, lib/ap2/approval-record.ts), the audit proof (GET …/audit-proof) with the
 * audit keys (./../audit/prove-verify.ts), and they are joined: the same order, and entries of
 * it, proven in the signed log, whose reasons name the mandate and the approval record.
 */
export type AuthorizedOrderVerdict =
  | {
      readonly ok: true;
      readonly orderId: string;
      /** The AP2 mandate's check; absent for an order without one (a /v2 order that waited). */
      readonly evidence?: Extract<EvidenceVerdict, { ok: true }>;
      /** The signed approval's check; absent for an order that did not wait. */
      readonly approval?: Extract<ApprovalRecordVerdict, { ok: true }>;
      readonly proof: Extract<ProofVerdict, { ok: true }>;
      /** The audit entry (seq) that names the mandate. */
      readonly entrySeq?: number;
      /** The audit entry (seq) that names the approval record. */
      readonly approvalEntrySeq?: number;
    }
  | { readonly ok: false; readonly problem: string };

/** A key file as given: a profile (`signing_keys`), a JWKS (`keys`) or a list of JWKs. */
export const keysOf = (doc: unknown): JWK[] => {
  const d = doc as { signing_keys?: unknown; keys?: unknown } | null;
  const list = Array.isArray(doc) ? doc : (d?.signing_keys ?? d?.keys);
  return Array.isArray(list) ? (list as JWK[]) : [];
};

type Wire = {
  order_id?: unknown;
  authorization?: unknown;
  approval?: { type?: unknown; record?: unknown } | null;
};

const fail = (problem: string): AuthorizedOrderVerdict => ({ ok: false, problem });

/** The seq of the first proven entry whose reason contains `text` (reasons were checked against their leaves). */
const namedIn = (proof: unknown, text: string): number | undefined =>
  (proof as { entries: { seq: number; reason?: unknown }[] }).entries.find(
    (e) => typeof e.reason === 'string' && e.reason.includes(text),
  )?.seq;

export async function verifyAuthorizedOrder(o: {
  readonly proof: unknown;
  readonly auditKeys: JSONWebKeySet;
  readonly evidence: unknown;
  readonly platformKeys: readonly JWK[];
  readonly businessKeys: readonly JWK[];
}): Promise<AuthorizedOrderVerdict> {
  const e = (o.evidence ?? {}) as Wire;
  const signedApproval = e.approval?.type === 'signed_approval_record';
  if (!e.authorization && !signedApproval)
    return fail('authorization: the order has no authorization evidence');
  let evidence: Extract<EvidenceVerdict, { ok: true }> | undefined;
  if (e.authorization) {
    const v = await verifyAuthorizationEvidence(
      o.evidence,
      { platform: o.platformKeys as Record<string, unknown>[], business: o.businessKeys },
      orderIdOfSession,
    );
    if (!v.ok) return fail(`authorization: ${v.problem}`);
    evidence = v;
  }
  const orderId = evidence?.orderId ?? e.order_id;
  if (typeof orderId !== 'string') return fail('authorization: the evidence names no order');
  let approval: Extract<ApprovalRecordVerdict, { ok: true }> | undefined;
  if (signedApproval) {
    const v = await verifyApprovalRecord(e.approval?.record, o.businessKeys, orderId);
    if (!v.ok) return fail(`approval: ${v.problem}`);
    approval = v;
  }
  // Both: the operators approved the amount the user confirmed (the checkout's total, in minor units).
  if (evidence && approval) {
    const total = (evidence.checkout.totals as { type?: unknown; amount?: unknown }[] | undefined)?.find(
      (t) => t.type === 'total',
    )?.amount;
    const cents = Number(approval.record.amount.replace('.', ''));
    if (total !== cents)
      return fail(
        `approval: the approved amount ${approval.record.amount} is not the total of the checkout the user confirmed (${String(total)} minor units)`,
      );
  }
  const proof = await verifyAuditProof(o.proof, o.auditKeys);
  if (!proof.ok) return fail(`audit proof: ${proof.problem}`);
  if (proof.orderId !== orderId) return fail(`the audit proof is of order ${proof.orderId}, not ${orderId}`);
  const entrySeq = evidence ? namedIn(o.proof, evidence.auditReason) : undefined;
  if (evidence && entrySeq === undefined)
    return fail(`no audit entry of order ${orderId} names the mandate (${evidence.auditReason})`);
  // Named from the record that verified, never from the file's own record_sha256.
  const approvalEntrySeq = approval ? namedIn(o.proof, approvalAuditReason(approval.sha256)) : undefined;
  if (approval && approvalEntrySeq === undefined)
    return fail(
      `no audit entry of order ${orderId} names the approval record (${approvalAuditReason(approval.sha256)}): read the authorization before the audit proof`,
    );
  return {
    ok: true,
    orderId,
    proof,
    ...(evidence ? { evidence, entrySeq } : {}),
    ...(approval ? { approval, approvalEntrySeq } : {}),
  };
}
