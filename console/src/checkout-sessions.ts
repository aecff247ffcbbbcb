/**
 * The Checkout page's data (GraphQL `checkoutSessions` and `carts`, orders:read; the persisted
 * CheckoutSessions and Carts) and its status filter. The API filters by the status a session has now (an
 * open session past its expiry is EXPIRED); the page only chooses which statuses to ask for.
 */

export type SessionStatus =
  | 'NOT_READY_FOR_PAYMENT'
  | 'READY_FOR_PAYMENT'
  | 'COMPLETE_IN_PROGRESS'
  | 'PENDING_APPROVAL'
  | 'COMPLETED'
  | 'CANCELED'
  | 'EXPIRED';

export interface CheckoutSession {
  id: string;
  status: SessionStatus;
  protocol: string;
  owner: string;
  agentId: string;
  keyId: string | null;
  currency: string;
  lines: {
    sku: string;
    name: string;
    quantity: number;
    unitPriceDecimal: string;
    discountDecimal: string;
    lineTotalDecimal: string;
  }[];
  discountDecimal: string;
  totalDecimal: string;
  orderId: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
}

/** The filter's choices: open sessions (what an agent may still change), each status, or any. */
export const STATUS_FILTERS: readonly { value: string; label: string; statuses: SessionStatus[] }[] = [
  {
    value: 'OPEN',
    label: 'open (not ready or ready for payment)',
    statuses: ['NOT_READY_FOR_PAYMENT', 'READY_FOR_PAYMENT'],
  },
  { value: 'NOT_READY_FOR_PAYMENT', label: 'not ready for payment', statuses: ['NOT_READY_FOR_PAYMENT'] },
  { value: 'READY_FOR_PAYMENT', label: 'ready for payment', statuses: ['READY_FOR_PAYMENT'] },
  { value: 'COMPLETE_IN_PROGRESS', label: 'completing', statuses: ['COMPLETE_IN_PROGRESS'] },
  { value: 'PENDING_APPROVAL', label: 'pending approval', statuses: ['PENDING_APPROVAL'] },
  { value: 'COMPLETED', label: 'completed', statuses: ['COMPLETED'] },
  { value: 'CANCELED', label: 'canceled', statuses: ['CANCELED'] },
  { value: 'EXPIRED', label: 'expired', statuses: ['EXPIRED'] },
  { value: 'ANY', label: 'any status', statuses: [] },
];

export const DEFAULT_FILTER = 'OPEN';
export const SESSIONS_PAGE = 50;

/** The operation's variables for a filter value; an unknown value is the default (open). */
export function sessionVariables(filter: string): { statuses: SessionStatus[] | null; first: number } {
  const chosen = STATUS_FILTERS.find((f) => f.value === filter) ?? STATUS_FILTERS[0];
  const statuses = chosen?.statuses ?? [];
  return { statuses: statuses.length ? statuses : null, first: SESSIONS_PAGE };
}

/** "ready for payment" for READY_FOR_PAYMENT. */
export const statusWords = (s: string) => s.toLowerCase().replace(/_/g, ' ');

export const FINAL: ReadonlySet<SessionStatus> = new Set(['COMPLETED', 'CANCELED', 'EXPIRED']);

/** A cart (UCP or ACP): estimated prices, nothing reserved; the checkout made from it, if any. */
export interface Cart {
  id: string;
  protocol: string;
  owner: string;
  agentId: string;
  keyId: string | null;
  currency: string;
  lines: CheckoutSession['lines'];
  problems: string[];
  discountDecimal: string;
  totalDecimal: string;
  checkoutSessionId: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
}

export const CARTS_PAGE = 50;
