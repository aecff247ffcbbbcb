import type { PurchaseOrder } from './purchase-order.ts';

/**
 * Where a page of orders ends: the last order's (processed_at, order_id). Orders are listed
 * newest first by that pair (keyset pagination), so a cursor stays correct while new orders
 * arrive, and the next page is one index range scan however deep the caller pages.
 */
export interface OrderCursor {
  readonly processedAt: number;
  readonly orderId: string;
}

const ORDER_ID = /^ord_[0-9a-f]{32}$/;
/** base64url without padding of a small JSON array: ~80 characters. */
const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,200}$/;

export const cursorOf = (o: Pick<PurchaseOrder, 'processedAt' | 'orderId'>): OrderCursor => ({
  processedAt: o.processedAt,
  orderId: o.orderId,
});

/**
 * Opaque to clients (they must only hand it back). Not signed: a cursor only says where to
 * resume inside the caller's own orders (the owner filter is applied on every page), so a
 * forged one can skip orders but never reveal another identity's.
 */
export const encodeCursor = (c: OrderCursor): string =>
  Buffer.from(JSON.stringify([c.processedAt, c.orderId]), 'utf8').toString('base64url');

/** The cursor this server issued, or undefined for anything else (the caller gets a 400). */
export function decodeCursor(text: unknown): OrderCursor | undefined {
  if (typeof text !== 'string' || !CURSOR_TEXT.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [processedAt, orderId] = value as [unknown, unknown];
  if (typeof processedAt !== 'number' || !Number.isFinite(processedAt) || processedAt < 0) return undefined;
  if (typeof orderId !== 'string' || !ORDER_ID.test(orderId)) return undefined;
  const cursor = { processedAt, orderId };
  // One spelling per cursor: other base64 texts that decode to the same bytes are not ours.
  return encodeCursor(cursor) === text ? cursor : undefined;
}
