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

/**
 * The order an approval link names (`/console/approvals?order=<id>`: a UCP checkout's
 * `continue_url` when it is `requires_escalation`), as the page finds it: its card in the queue,
 * or the order's status when it waits no more, or nothing.
 */
export type LinkedOrder = { kind: 'waiting' } | { kind: 'decided'; status: string } | { kind: 'not-found' };

/** Where the linked order stands, from the queue and (when it is not in it) the order's own status. Pure. */
export function linkedOrder(
  orderId: string,
  queue: readonly Pending[],
  looked: { status: string } | null | undefined,
): LinkedOrder | undefined {
  if (queue.some((p) => p.order.orderId === orderId)) return { kind: 'waiting' };
  if (looked === undefined) return undefined;
  return looked === null ? { kind: 'not-found' } : { kind: 'decided', status: looked.status };
}

const STATUS_WORDS: Record<string, string> = {
  APPROVED: 'approved',
  REJECTED: 'rejected',
  EXPIRED: 'expired (no decision in time)',
  CANCELLED: 'cancelled',
  PENDING_APPROVAL: 'waiting for approval, beyond the first 100 orders of the queue',
};

export function linkedOrderSentence(orderId: string, o: LinkedOrder): string {
  switch (o.kind) {
    case 'waiting':
      return `Order ${orderId} waits for a decision: its card is marked below.`;
    case 'decided':
      return o.status === 'PENDING_APPROVAL'
        ? `Order ${orderId} is ${STATUS_WORDS.PENDING_APPROVAL}.`
        : `Order ${orderId} waits for no decision: it is already ${STATUS_WORDS[o.status] ?? o.status.toLowerCase()}.`;
    case 'not-found':
      return `Order ${orderId} was not found.`;
  }
}
