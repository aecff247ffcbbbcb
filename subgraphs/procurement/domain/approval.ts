import type { PurchaseOrder } from './purchase-order.ts';

/**
 * Human approval of agent orders (issue 22): the state machine of an operator's decision, pure.
 *
 *   PENDING_APPROVAL ──approve (last one needed)──▶ APPROVED
 *          │ ├─approve (dual control, first)──▶ PENDING_APPROVAL (one approval recorded)
 *          │ ├─reject──▶ REJECTED
 *          │ ├─expiry──▶ EXPIRED
 *          │ └─agent's cancel──▶ CANCELLED
 *
 * Repeating the decision one already took is idempotent (the same order back, nothing
 * written); every other decision on a decided order is refused, naming what was decided.
 */
export type Decision =
  | { readonly kind: 'approve'; readonly operator: string; readonly note: string | null }
  | { readonly kind: 'reject'; readonly operator: string; readonly reason: string };

/** Why a decision cannot be taken; each becomes a GraphQL error code (graphql.ts). */
export type DecisionRefusal =
  /** Another decision was taken first (a concurrent operator, or earlier). */
  | { readonly kind: 'already-decided'; readonly order: PurchaseOrder }
  /** Dual control: this operator has approved already; a second, distinct operator must. */
  | { readonly kind: 'same-approver'; readonly order: PurchaseOrder }
  /** Not awaiting approval: never needed one, cancelled by its agent, or expired. */
  | { readonly kind: 'not-pending'; readonly order: PurchaseOrder };

export type DecisionVerdict =
  /** Write `next` over the version it was computed from. */
  | { readonly kind: 'change'; readonly next: PurchaseOrder }
  /** The same operator took the same decision before: answer the order as it is. */
  | { readonly kind: 'repeat'; readonly order: PurchaseOrder }
  | DecisionRefusal;

/** Whether a pending order's time is up at `nowMs` (the end itself is expired). */
export const approvalExpired = (o: PurchaseOrder, nowMs: number): boolean =>
  o.status === 'PENDING_APPROVAL' && o.expiresAt !== null && nowMs >= Math.round(o.expiresAt * 1000);

const approvedBy = (o: PurchaseOrder, operator: string) => o.approvals.some((a) => a.operator === operator);

export function decide(o: PurchaseOrder, d: Decision, nowMs: number): DecisionVerdict {
  const at = nowMs / 1000;
  if (o.status === 'PENDING_APPROVAL') {
    // Not yet swept, but its time is up: deciding it now would outlive the promise to the agent.
    if (approvalExpired(o, nowMs)) return { kind: 'not-pending', order: o };
    if (d.kind === 'reject')
      return {
        kind: 'change',
        next: Object.freeze({
          ...o,
          status: 'REJECTED',
          decidedAt: at,
          decidedBy: d.operator,
          decisionReason: d.reason,
          version: o.version + 1,
        }),
      };
    if (approvedBy(o, d.operator)) return { kind: 'same-approver', order: o };
    const approvals = [...o.approvals, Object.freeze({ operator: d.operator, at, note: d.note })];
    const done = approvals.length >= o.approvalsRequired;
    return {
      kind: 'change',
      next: Object.freeze({
        ...o,
        approvals,
        ...(done
          ? { status: 'APPROVED' as const, decidedAt: at, decidedBy: d.operator, decisionReason: d.note }
          : {}),
        version: o.version + 1,
      }),
    };
  }
  if (o.status === 'APPROVED' && o.approvalsRequired > 0)
    return d.kind === 'approve' && approvedBy(o, d.operator)
      ? { kind: 'repeat', order: o }
      : { kind: 'already-decided', order: o };
  if (o.status === 'REJECTED')
    return d.kind === 'reject' && o.decidedBy === d.operator
      ? { kind: 'repeat', order: o }
      : { kind: 'already-decided', order: o };
  return { kind: 'not-pending', order: o };
}

/** The order once its approval request expired at `nowMs`. Pure. */
export function expired(o: PurchaseOrder, nowMs: number): PurchaseOrder {
  return Object.freeze({
    ...o,
    status: 'EXPIRED',
    decidedAt: nowMs / 1000,
    decidedBy: 'system',
    decisionReason: `no decision before ${new Date(Math.round((o.expiresAt ?? nowMs / 1000) * 1000)).toISOString()}`,
    version: o.version + 1,
  });
}
