/**
 * Fixtures of the UCP order event tests: a UCP checkout session as the session core stores it
 * (its `fulfillment` the UCP checkout's, a destination and an option selected) and its order.
 */
import type { CheckoutSession, SessionLine } from '../../../subgraphs/procurement/checkout/session.ts';
import type { OrderStatus } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import type { UcpOrderFacts } from '../../../subgraphs/procurement/webhooks/ucp-order.ts';
import { cents, LINES, sessionOf } from '../../acp/support/webhooks.ts';

/** The ACP fixture's two lines, every item priced: items 0 and 1. */
export const UCP_LINES: SessionLine[] = LINES.map((l, item) => ({ ...l, item }));

/** The UCP checkout fulfillment (types/fulfillment.json) with a new address and a chosen option. */
export const UCP_FULFILLMENT = {
  methods: [
    {
      id: 'm_1',
      type: 'shipping',
      line_item_ids: ['li_0', 'li_1'],
      selected_destination_id: 'dest_1',
      destinations: [
        {
          id: 'dest_1',
          first_name: 'Jane',
          last_name: 'Doe',
          street_address: '1 Webhook St',
          address_locality: 'Toronto',
          address_region: 'ON',
          postal_code: 'M5V 2T6',
          address_country: 'CA',
        },
      ],
      groups: [
        {
          id: 'g_1',
          line_item_ids: ['li_0', 'li_1'],
          selected_option_id: 'standard',
          options: [
            { id: 'standard', title: 'Standard shipping', totals: [{ type: 'total', amount: 0 }] },
            { id: 'express', title: 'Express shipping', totals: [{ type: 'total', amount: 0 }] },
          ],
        },
      ],
    },
  ],
};

export interface UcpSessionOptions {
  readonly lines?: SessionLine[];
  readonly fulfillment?: Record<string, unknown> | null;
  readonly keyId?: string | null;
  readonly owner?: string;
  /** UCP-A's field: the platform profile's order webhook (absent: no events to deliver). */
  readonly orderWebhookUrl?: string;
}

/** A completed UCP session with its order id, as the checkout service stores it (the ACP fixture's, as UCP). */
export function ucpSessionOf(o: UcpSessionOptions = {}): CheckoutSession {
  const s = sessionOf(o.keyId ?? null, o.lines ?? UCP_LINES, o.owner);
  return {
    ...s,
    protocol: 'ucp',
    status: 'completed',
    purchaseOrderNumber: null,
    fulfillment: o.fulfillment === undefined ? UCP_FULFILLMENT : o.fulfillment,
    ...(o.orderWebhookUrl !== undefined
      ? {
          channel: {
            protocol: 'ucp' as const,
            profileUrl: 'https://platform.example/profile',
            orderWebhookUrl: o.orderWebhookUrl,
          },
        }
      : {}),
  };
}

const PLACED = Date.parse('2026-04-09T09:00:00.000Z') / 1000;
const DECIDED = Date.parse('2026-04-09T10:00:00.000Z') / 1000;

/** The session's order as the order domain stores it, in `status`. */
export function orderOf(s: CheckoutSession, status: OrderStatus): UcpOrderFacts {
  return {
    orderId: s.orderId as string,
    status,
    lines: s.lines.map((l) => ({
      sku: l.sku,
      quantity: l.quantity,
      unitPrice: cents(l.unitCents),
      discount: cents(l.discountCents),
      lineTotal: cents(l.totalCents),
    })),
    total: cents(s.totals.totalCents),
    processedAt: PLACED,
    cancelledAt: status === 'CANCELLED' ? DECIDED : null,
    decidedAt: status === 'REJECTED' || status === 'EXPIRED' ? DECIDED : null,
    decisionReason: null,
  };
}
