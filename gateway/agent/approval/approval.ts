import type { FastifyRequest } from 'fastify';
import type { ApprovalPolicy } from '../../../lib/ap2/approval-record.ts';
import type { PurchaseOrderRequest } from '../../../subgraphs/procurement/contract/types.ts';
import type { SpendStatus } from '../../../subgraphs/procurement/spend/ledger.ts';
import { approvalsRequired, centsOfText, textOfCents } from '../../../subgraphs/procurement/spend/policy.ts';

/** The approval the spend policy asks for one order (issue 22); null when none. Pure. */
export function decideApproval(
  status: SpendStatus | undefined,
  order: PurchaseOrderRequest,
): { readonly required: 1 | 2; readonly reason: string } | null {
  const cents = centsOfText(order.max_budget_usd);
  if (!status || cents === undefined) return null;
  const required = approvalsRequired(status.policy, cents);
  if (required === 0) return null;
  const p = status.policy;
  const threshold = required === 2 ? p.secondApprovalAboveCents : p.approvalAboveCents;
  const above = threshold === undefined ? '' : ` above ${textOfCents(threshold)} ${p.currency}`;
  return {
    required,
    reason: `approval: ${required === 2 ? 'two operators' : 'an operator'} must approve orders${above} under ${p.subject}`,
  };
}

/**
 * The spend policy's approval thresholds as the order keeps them (issue 50): with the order's
 * amount, what its approval record, or the evidence that it needed none, names. Undefined when
 * no policy applied. Pure.
 */
export function appliedPolicy(status: SpendStatus | undefined | null): ApprovalPolicy | undefined {
  if (!status) return undefined;
  const p = status.policy;
  return {
    subject: p.subject,
    currency: p.currency,
    ...(p.approvalAboveCents !== undefined ? { approval_above: textOfCents(p.approvalAboveCents) } : {}),
    ...(p.secondApprovalAboveCents !== undefined
      ? { second_approval_above: textOfCents(p.secondApprovalAboveCents) }
      : {}),
  };
}

/** `approvalPolicy` of a place command, when a policy applied. */
export const withPolicy = (p: ApprovalPolicy | undefined): { approvalPolicy?: ApprovalPolicy } =>
  p ? { approvalPolicy: p } : {};

/**
 * Step 7¾ (preHandler, right after the spend step that reserved the amount): when the policy
 * asks a human to approve orders of this amount, the order domain stores it PENDING_APPROVAL
 * and the agent gets 202. The reservation stays until the decision (or expiry, or the agent's
 * cancel) keeps or gives it back. Nothing is refused here.
 */
export function approvalStep() {
  return async function approval(req: FastifyRequest) {
    const { order, spend } = req.agent;
    if (!order) return;
    const d = decideApproval(spend?.status, order);
    if (!d) return;
    req.agent.approval = { required: d.required };
    req.agent.reason = `${req.agent.reason}; ${d.reason}`;
  };
}
