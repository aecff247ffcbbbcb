/**
 * The order search of the Orders page: the API's `purchaseOrders` filters (issue 12's
 * PurchaseOrderSearch operation), not a filter of the page's own over a first page of orders.
 */
import { operation } from './operations.ts';
import type { WithLines } from './order-lines.ts';

/** An order of the search: a checkout order's lines and total come with it (WithLines). */
export interface Order extends WithLines {
  orderId: string;
  status: string;
  agentId: string;
  spiffeId: string;
  sku: string;
  quantity: number;
  /** Exact decimal text (the Decimal twin of the deprecated Float allocatedBudget). */
  allocatedBudgetDecimal: string;
  /** Unix seconds (the spec's processed_at). */
  processedAt: number | string;
  /** Where the next page starts (the `after` argument). */
  cursor: string;
}

/**
 * The persisted operation as the manifest holds it (graphql-js's print of
 * schemas/operations/purchase-order-search.graphql): the same text hashes to the manifest id,
 * so the search runs when the gateway's safelist is on.
 */
export const SEARCH: string = operation('PurchaseOrderSearch');

export const PAGE_SIZE = 50;

/** What the operator typed; times are `<input type="datetime-local">` values, in the browser's zone. */
export interface SearchForm {
  agentId: string;
  spiffeId: string;
  sku: string;
  status: '' | 'APPROVED' | 'CANCELLED';
  from: string;
  before: string;
}

export const EMPTY_SEARCH: SearchForm = {
  agentId: '',
  spiffeId: '',
  sku: '',
  status: '',
  from: '',
  before: '',
};

/** A datetime-local value as Unix seconds, or null when empty or not a time. */
export function unixSeconds(local: string): number | null {
  if (!local.trim()) return null;
  const ms = Date.parse(local);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/**
 * The operation's variables: an empty field is no filter (null). The SKU is sent as typed
 * (trimmed): the API matches it exactly, and a wrong case finds nothing rather than a guess.
 */
export function searchVariables(form: SearchForm, after: string | null): Record<string, unknown> {
  const text = (s: string) => s.trim() || null;
  return {
    agentId: text(form.agentId),
    spiffeId: text(form.spiffeId),
    sku: text(form.sku),
    status: form.status || null,
    placedFrom: unixSeconds(form.from),
    placedBefore: unixSeconds(form.before),
    after,
    limit: PAGE_SIZE,
  };
}
