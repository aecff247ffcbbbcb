/**
 * The ACP bench's requests and histograms, shared by the flows (./flows.ts) and the operations
 * alone (./ops.ts): the same lines and quantities for checkout sessions and carts, so both are
 * priced alike.
 */
import { randomUUID } from 'node:crypto';
import * as hdr from 'hdr-histogram-js';

export type Op = 'create' | 'update' | 'complete';
export const OPS: readonly Op[] = ['create', 'update', 'complete'];

export interface OpFigures {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  mean: number;
  failed: number;
}

export const HEADERS = (key: string) => ({
  authorization: `Bearer ${key}`,
  'api-version': '2026-04-17',
  'content-type': 'application/json',
});

// Apparel and books: no promotion with a cap per customer applies (the bench promotion of
// harness/tools-promotion.ts takes 3 items with a tool, the seeded PROMO-ELEC-3FOR2 3 items with
// an electronics item, one redemption per customer each), and every session here is one key's
// agent. With such a cart the sessions made before the first completion all carried the
// discount and every completion after the first was refused (the cap was reached since the
// quote: re-priced, not ordered), so "complete" measured that refusal, not a purchase.
const CREATE_LINES = [
  { id: 'SKU-APP-000003', quantity: 2 },
  { id: 'SKU-BOK-000002', quantity: 1 },
];
const UPDATE_LINES = [
  { id: 'SKU-APP-000003', quantity: 2 },
  { id: 'SKU-BOK-000002', quantity: 2 },
];
export const CREATE = JSON.stringify({ currency: 'usd', capabilities: {}, line_items: CREATE_LINES });
export const UPDATE = JSON.stringify({ line_items: UPDATE_LINES });
export const COMPLETE = JSON.stringify({
  payment_data: { purchase_order_number: 'PO-BENCH', payment_terms: 'net_30' },
});
/** ACP carts (openapi.cart.yaml): the sessions' lines; an update replaces them (PUT). */
export const CART_CREATE = JSON.stringify({ line_items: CREATE_LINES });
export const CART_UPDATE = UPDATE;

/**
 * Each load's own prefix of Idempotency-Keys. A create's key is scoped by the key's identity and
 * the path alone, so keys that repeat across loads of one run (a counter from 1 in each worker)
 * replayed the earlier load's sessions instead of creating new ones.
 */
export const RUN = randomUUID();

export const histogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });

/** A histogram's figures in ms (recorded in µs). */
export const figures = (h: hdr.Histogram, count: number, failed: number): OpFigures => ({
  count,
  p50: h.getValueAtPercentile(50) / 1000,
  p99: h.getValueAtPercentile(99) / 1000,
  p999: h.getValueAtPercentile(99.9) / 1000,
  mean: h.mean / 1000,
  failed,
});
