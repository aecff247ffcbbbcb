import type { ApprovalPolicy, ApprovalRecord } from '../../../lib/ap2/approval-record.ts';
import { sha256b64url } from '../../../lib/ap2/canonical.ts';
import { centsOfText, textOfCents } from '../spend/policy.ts';
import type { PurchaseOrder } from './purchase-order.ts';

const MAX_SUBJECT = 512;
const AMOUNT = /^(0|[1-9]\d{0,11})\.\d{2}$/;
const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString();

/**
 * The approval policy a place command carries (the gateway's approval step read it from the
 * spend policy that applied), checked again where it crosses a process boundary: the policy's
 * subject, its currency and thresholds as exact text; undefined when it is not one.
 */
export function approvalPolicyOf(v: unknown): ApprovalPolicy | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const p = v as Record<string, unknown>;
  const amount = (x: unknown) => x === undefined || (typeof x === 'string' && AMOUNT.test(x));
  if (typeof p.subject !== 'string' || p.subject.length === 0 || p.subject.length > MAX_SUBJECT)
    return undefined;
  if (p.currency !== 'USD' || !amount(p.approval_above) || !amount(p.second_approval_above)) return undefined;
  return Object.freeze({
    subject: p.subject,
    currency: p.currency,
    ...(typeof p.approval_above === 'string' ? { approval_above: p.approval_above } : {}),
    ...(typeof p.second_approval_above === 'string'
      ? { second_approval_above: p.second_approval_above }
      : {}),
  });
}

/**
 * The record this system signs when an order that waited is decided (lib/ap2/approval-record.ts):
 * the decision, every approval (operator, time, note), a rejection's operator and reason, the
 * policy that applied when the order was placed and the order's amount. Undefined for an order
 * that is not decided by an operator (pending, expired, cancelled, never waited) or that was
 * placed before the policy was kept with the order (nothing to name). Pure.
 */
export function approvalRecordOf(o: PurchaseOrder): ApprovalRecord | undefined {
  const policy = o.approvalPolicy;
  if (!policy || o.approvalsRequired === 0 || o.decidedAt === null) return undefined;
  if (o.status !== 'APPROVED' && o.status !== 'REJECTED') return undefined;
  const approvals = o.approvals.map((a) => ({
    operator: a.operator,
    at: iso(a.at),
    ...(a.note !== null ? { note: a.note } : {}),
  }));
  return {
    order_id: o.orderId,
    decision: o.status === 'APPROVED' ? 'approved' : 'rejected',
    // Two decimals, as the policy's amounts ("101.00"), never through a double.
    amount: textOfCents(centsOfText(o.allocatedBudget) ?? 0),
    currency: policy.currency,
    policy,
    approvals_required: o.approvalsRequired,
    approvals,
    ...(o.status === 'REJECTED'
      ? { rejection: { operator: o.decidedBy ?? '', at: iso(o.decidedAt), reason: o.decisionReason ?? '' } }
      : {}),
    decided_at: iso(o.decidedAt),
  };
}

/** What the order's authorization read says of its approval (docs/ap2.md, "The approval decision"). */
export type ApprovalEvidence =
  /** Decided by operators: the record this system signed, and its SHA-256 (what the audit names). */
  | {
      readonly type: 'signed_approval_record';
      readonly record: string;
      readonly record_sha256: string;
      readonly audit_reason: string;
    }
  /**
   * It did not wait: the policy that applied (null: none) and the amount, not signed (the order
   * was confirmed at once; nothing was decided by a person).
   */
  | {
      readonly type: 'not_required';
      readonly policy: ApprovalPolicy | null;
      readonly amount: string;
    }
  /** It waited and no signed decision exists: still pending, expired, cancelled, or decided before records were signed. */
  | { readonly type: 'undecided'; readonly status: string; readonly approvals_required: number };

/** The phrase the authorization read's audit entry carries for a signed record (the offline check looks for it). */
export const approvalAuditReason = (sha256: string): string => `approval record sha-256 ${sha256}`;

export function approvalEvidenceOf(o: PurchaseOrder): ApprovalEvidence {
  if (o.approvalRecord) {
    const h = sha256b64url(o.approvalRecord);
    return {
      type: 'signed_approval_record',
      record: o.approvalRecord,
      record_sha256: h,
      audit_reason: approvalAuditReason(h),
    };
  }
  if (o.approvalsRequired === 0)
    return {
      type: 'not_required',
      policy: o.approvalPolicy ?? null,
      amount: textOfCents(centsOfText(o.allocatedBudget) ?? 0),
    };
  return { type: 'undecided', status: o.status, approvals_required: o.approvalsRequired };
}
