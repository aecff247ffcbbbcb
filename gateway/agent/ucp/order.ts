import type { CheckoutSession } from '../../../subgraphs/procurement/checkout/session.ts';
import type { PurchaseOrderResponse } from '../../../subgraphs/procurement/contract/types.ts';
import { OPTION_TITLE, selectedDestination } from './fulfillment.ts';
import { UCP_VERSION } from './schema/index.ts';

/**
 * SEAM (docs/ucp-coordination.md): the order as `GET /orders/{id}` shows it, rendered here from
 * the checkout session and the order's status until UCP-B's `renderUcpOrder`
 * (subgraphs/procurement/webhooks/ucp-order.ts) lands; then this file calls it and nothing else
 * changes. Lines, totals and the fulfilment expectation come from the session the order was
 * placed from (its lines are the order's); a cancelled, rejected or expired order has its lines
 * `removed` and a cancellation adjustment. Pure.
 */
export function renderOrder(
  s: CheckoutSession,
  order: PurchaseOrderResponse,
  permalink: string,
): Record<string, unknown> {
  const removed = order.status === 'CANCELLED' || order.status === 'REJECTED' || order.status === 'EXPIRED';
  const destination = selectedDestination(s.fulfillment);
  const { id: _id, ...address } = destination ?? {};
  return {
    ucp: {
      version: UCP_VERSION,
      status: 'success',
      capabilities: { 'dev.ucp.shopping.order': [{ version: UCP_VERSION }] },
    },
    id: order.order_id,
    checkout_id: s.id,
    permalink_url: permalink,
    currency: s.currency.toUpperCase(),
    line_items: s.lines.map((l) => ({
      id: `li_${l.item}`,
      item: { id: l.sku, title: l.name, price: l.unitCents },
      quantity: { original: l.quantity, total: removed ? 0 : l.quantity, fulfilled: 0 },
      totals: [
        { type: 'subtotal', amount: l.baseCents },
        ...(l.discountCents > 0 ? [{ type: 'items_discount', amount: -l.discountCents }] : []),
        { type: 'total', amount: l.totalCents },
      ],
      status: removed ? 'removed' : 'processing',
    })),
    fulfillment: {
      expectations: destination
        ? [
            {
              id: 'exp_1',
              line_items: s.lines.map((l) => ({ id: `li_${l.item}`, quantity: l.quantity })),
              method_type: 'shipping',
              destination: address,
              description: OPTION_TITLE,
            },
          ]
        : [],
      events: [],
    },
    totals: [
      { type: 'subtotal', amount: s.totals.baseCents },
      ...(s.totals.discountCents > 0 ? [{ type: 'items_discount', amount: -s.totals.discountCents }] : []),
      { type: 'total', amount: s.totals.totalCents },
    ],
    ...(order.status === 'PENDING_APPROVAL'
      ? { messages: [{ type: 'info', content: 'The order waits for a person to approve it.' }] }
      : removed
        ? {
            messages: [
              {
                type: 'info',
                content: `The order was ${order.status.toLowerCase()}${order.decision_reason ? `: ${order.decision_reason}` : ''}.`,
              },
            ],
          }
        : {}),
  };
}
