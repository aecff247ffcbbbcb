/** The Approvals page's data (GraphQL PendingApprovals and ApprovalDecisions) and its pure rules. */
import { centsOf, formatCents } from './amounts.ts';
import type { WithLines } from './order-lines.ts';

export interface Pending {
  order: WithLines & {
    orderId: string;
    sku: string;
    quantity: number;
    processedAt: number;
    product: { name: string; basePrices: { currency: string; amountDecimal: string }[] } | null;
  };
  agentId: string;
  spiffeId: string;
  amount: string;
  approvalsRequired: number;
  approvals: { operator: string; at: number; note: string | null }[];
  expiresAt: number;
  policy: {
    subject: string;
    period: string;
    budget: string;
    approvalAbove: string | null;
    secondApprovalAbove: string | null;
  } | null;
  remainingBudget: string | null;
}

export interface Decision {
  orderId: string;
  status: 'APPROVED' | 'REJECTED' | 'EXPIRED';
  agentId: string;
  sku: string;
  quantity: number;
  allocatedBudgetDecimal: string;
  approvalsRequired: number;
  approvals: { operator: string; at: number; note: string | null }[];
  decidedAt: number | null;
  decidedBy: string | null;
  decisionReason: string | null;
}

/** The catalog price in USD (orders are in USD), else the first one the catalog has. */
export function unitPrice(p: Pending): { currency: string; amountDecimal: string } | undefined {
  const prices = p.order.product?.basePrices ?? [];
  return prices.find((b) => b.currency === 'USD') ?? prices[0];
}

/** What a /v2 order's budget lacks against the catalog: quantity × catalog unit price, in cents. */
export interface Shortfall {
  neededCents: bigint;
  allocatedCents: bigint;
}

/**
 * The catalog cost of a /v2 order (quantity × the catalog's USD unit price) when its budget does
 * not cover it; undefined when it does, or when there is no USD price to compare with (the
 * budget is in USD; another currency's price says nothing about it).
 */
export function catalogShortfall(p: Pending): Shortfall | undefined {
  const price = unitPrice(p);
  if (price?.currency !== 'USD') return undefined;
  const unit = centsOf(price.amountDecimal);
  const allocated = centsOf(p.amount);
  if (unit === undefined || allocated === undefined) return undefined;
  const needed = unit * BigInt(p.order.quantity);
  return needed > allocated ? { neededCents: needed, allocatedCents: allocated } : undefined;
}

export const shortfallSentence = (s: Shortfall): string =>
  `The budget does not cover the catalog cost: ${formatCents(s.neededCents)} USD needed, ${formatCents(s.allocatedCents)} USD allocated.`;

/**
 * The newest `n` decisions by a person or the expiry sweep: approved orders that needed an
 * approval (an order approved on creation is no decision), rejected and expired ones, newest
 * decision first.
 */
export function newestDecisions(
  d: Record<'approved' | 'rejected' | 'expired', Decision[]>,
  n: number,
): Decision[] {
  return [...d.approved.filter((o) => o.approvalsRequired > 0), ...d.rejected, ...d.expired]
    .filter((o) => o.decidedAt !== null)
    .sort((a, b) => (b.decidedAt ?? 0) - (a.decidedAt ?? 0) || a.orderId.localeCompare(b.orderId))
    .slice(0, n);
}
