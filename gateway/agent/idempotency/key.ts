import { createHash } from 'node:crypto';
import type { PurchaseOrderRequest } from '../../../subgraphs/procurement/contract/types.ts';

const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
const TOKEN = /^[\x21-\x7e]+$/;
const MAX = 255;

/**
 * The Idempotency-Key header: the draft makes it a structured-field string ("…"); a bare
 * token of visible ASCII is accepted too, as many clients send one. Undefined when absent,
 * null when unusable (sent twice, empty, too long, other characters).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined | null {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') return null;
  const sf = SF_STRING.exec(header);
  const key = sf ? (sf[1] as string).replace(/\\(["\\])/g, '$1') : TOKEN.test(header) ? header : null;
  return key && key.length <= MAX ? key : null;
}

/** Keys are scoped to the identity: another agent's identical key is another record. */
export const recordKey = (identity: string, key: string): string =>
  createHash('sha256').update(identity).update('\0').update(key).digest('base64url');

/** The request's fingerprint: the parsed body's fields in a fixed order (whitespace-blind). */
export const fingerprint = (r: PurchaseOrderRequest): string =>
  createHash('sha256')
    .update(JSON.stringify([r.agent_id, r.sku, r.quantity, r.max_budget_usd]))
    .digest('base64url');
