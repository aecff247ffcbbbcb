/**
 * renderUcpOrder: a checkout order as UCP's `order`, each rendering validated with Ajv against the
 * vendored release (shopping/order.json at v2026-04-08), amounts in integer minor units.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UCP_VERSION } from '../../../gateway/agent/ucp/schema/index.ts';
import type { CheckoutSession, SessionLine } from '../../../subgraphs/procurement/checkout/session.ts';
import type { OrderStatus } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import {
  renderUcpOrder,
  UCP_ORDER_VERSION,
  type UcpShipmentFacts,
} from '../../../subgraphs/procurement/webhooks/ucp-order.ts';
import { cents } from '../../acp/support/webhooks.ts';
import { expectUcp } from '../support/validate.ts';
import { orderOf, UCP_FULFILLMENT, ucpSessionOf } from './support.ts';

const REST = 'https://shop.example.com/ucp';
type Order = {
  id: string;
  checkout_id: string;
  permalink_url: string;
  currency: string;
  line_items: {
    id: string;
    item: { id: string; title: string; price: number };
    quantity: { original: number; total: number; fulfilled: number };
    totals: { type: string; amount: number }[];
    status: string;
  }[];
  fulfillment: { expectations: Record<string, unknown>[]; events: Record<string, unknown>[] };
  adjustments: Record<string, unknown>[];
  totals: { type: string; amount: number }[];
  messages?: { type: string; code: string }[];
};
const byType = (totals: { type: string; amount: number }[]) =>
  Object.fromEntries(totals.map((t) => [t.type, t.amount]));
/** The session's order, in `status`, as UCP's order. */
const render = (session: CheckoutSession, status: OrderStatus = 'APPROVED', shipments?: UcpShipmentFacts[]) =>
  renderUcpOrder({ order: orderOf(session, status), session, restEndpoint: REST, shipments }) as Order;

describe('renderUcpOrder', () => {
  it('follows the release the gateway vendors', () => {
    expect(UCP_ORDER_VERSION).toBe(UCP_VERSION);
  });

  it('renders a placed order: ids, permalink, upper-case currency, lines and totals in cents', () => {
    const session = ucpSessionOf();
    const order = render(session);
    expectUcp('order', order);
    expect(order).toMatchObject({
      id: session.orderId,
      checkout_id: session.id,
      permalink_url: `${REST}/orders/${session.orderId}`,
      currency: 'USD',
      adjustments: [],
    });
    expect(order.line_items.map((l) => [l.id, l.item, l.quantity, byType(l.totals), l.status])).toEqual([
      [
        'li_0',
        { id: 'SKU-ABC-000001', title: 'Widget', price: 1250 },
        { original: 2, total: 2, fulfilled: 0 },
        { subtotal: 2500, items_discount: -250, total: 2250 },
        'processing',
      ],
      [
        'li_1',
        { id: 'SKU-ELC-000004', title: 'Cable', price: 999 },
        { original: 3, total: 3, fulfilled: 0 },
        { subtotal: 2997, total: 2997 },
        'processing',
      ],
    ]);
    expect(byType(order.totals)).toEqual({ subtotal: 5497, items_discount: -250, total: 5247 });
    expect(order.messages).toBeUndefined();
  });

  it("takes the expectation from the session's selected destination and option", () => {
    const session = ucpSessionOf();
    const order = render(session);
    expect(order.fulfillment.expectations).toEqual([
      {
        id: 'exp_1',
        line_items: [
          { id: 'li_0', quantity: 2 },
          { id: 'li_1', quantity: 3 },
        ],
        method_type: 'shipping',
        destination: {
          first_name: 'Jane',
          last_name: 'Doe',
          street_address: '1 Webhook St',
          address_locality: 'Toronto',
          address_region: 'ON',
          postal_code: 'M5V 2T6',
          address_country: 'CA',
        },
        description: 'Standard shipping',
        fulfillable_on: 'now',
      },
    ]);
  });

  it('has no expectation without a selected destination (expectation.json requires one)', () => {
    const methods = [{ ...UCP_FULFILLMENT.methods[0], selected_destination_id: null, destinations: [] }];
    const session = ucpSessionOf({ fulfillment: { methods } });
    const order = render(session);
    expectUcp('order', order);
    expect(order.fulfillment.expectations).toEqual([]);
  });

  it('shows shipments as fulfillment events and derives each line status from its quantities', () => {
    const session = ucpSessionOf();
    const shipments: UcpShipmentFacts[] = [
      {
        id: 'shp_1',
        occurredAt: '2026-04-10T12:00:00.000Z',
        type: 'shipped',
        trackingNumber: '1Z999',
        trackingUrl: 'https://carrier.example/track/1Z999',
        carrier: 'UPS',
        lines: [
          { line: 0, quantity: 2 },
          { line: 1, quantity: 1 },
        ],
      },
    ];
    const order = render(session, 'APPROVED', shipments);
    expectUcp('order', order);
    expect(order.fulfillment.events).toEqual([
      {
        id: 'shp_1',
        occurred_at: '2026-04-10T12:00:00.000Z',
        type: 'shipped',
        line_items: [
          { id: 'li_0', quantity: 2 },
          { id: 'li_1', quantity: 1 },
        ],
        tracking_number: '1Z999',
        tracking_url: 'https://carrier.example/track/1Z999',
        carrier: 'UPS',
      },
    ]);
    expect(order.line_items.map((l) => [l.quantity.fulfilled, l.status])).toEqual([
      [2, 'fulfilled'],
      [1, 'partial'],
    ]);
  });

  it.each<[OrderStatus, string]>([
    ['CANCELLED', "Canceled by the buyer's agent"],
    ['REJECTED', 'Rejected by the merchant: over budget'],
    ['EXPIRED', "Expired without the merchant's approval: over budget"],
  ])('a %s order: lines removed, no expectation, one cancellation adjustment', (status, description) => {
    const session = ucpSessionOf();
    const order = renderUcpOrder({
      order: { ...orderOf(session, status), decisionReason: status === 'CANCELLED' ? null : 'over budget' },
      session,
      restEndpoint: REST,
    }) as Order;
    expectUcp('order', order);
    expect(order.line_items.map((l) => [l.quantity, l.status])).toEqual([
      [{ original: 2, total: 0, fulfilled: 0 }, 'removed'],
      [{ original: 3, total: 0, fulfilled: 0 }, 'removed'],
    ]);
    expect(order.fulfillment.expectations).toEqual([]);
    expect(order.adjustments).toEqual([
      {
        id: `adj_${session.orderId}_cancellation`,
        type: 'cancellation',
        occurred_at: '2026-04-09T10:00:00.000Z',
        status: 'completed',
        line_items: [
          { id: 'li_0', quantity: -2 },
          { id: 'li_1', quantity: -3 },
        ],
        totals: [{ type: 'total', display_text: 'Total', amount: -5247 }],
        description,
      },
    ]);
  });

  it('says a pending order waits for approval (info message)', () => {
    const session = ucpSessionOf();
    const order = render(session, 'PENDING_APPROVAL');
    expectUcp('order', order);
    expect(order.messages?.map((m) => [m.type, m.code])).toEqual([['info', 'requires_buyer_review']]);
  });

  it('renders any priced lines as a valid order whose totals add up (fast-check)', () => {
    const line = fc.record({
      quantity: fc.integer({ min: 1, max: 999 }),
      unitCents: fc.integer({ min: 0, max: 10_000_000 }),
      discountPermille: fc.integer({ min: 0, max: 1000 }),
    });
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 50 }),
        fc.constantFrom<OrderStatus>('APPROVED', 'PENDING_APPROVAL', 'CANCELLED', 'REJECTED'),
        (ls, status) => {
          const lines: SessionLine[] = ls.map((l, i) => {
            const base = l.unitCents * l.quantity;
            const discount = Math.floor((base * l.discountPermille) / 1000);
            return {
              item: i,
              sku: `SKU-ABC-${String(i).padStart(6, '0')}`,
              name: `Item ${i}`,
              quantity: l.quantity,
              unitCents: l.unitCents,
              baseCents: base,
              discountCents: discount,
              totalCents: base - discount,
            };
          });
          const session = ucpSessionOf({ lines });
          const order = render(session, status);
          expectUcp('order', order);
          const t = byType(order.totals);
          expect((t.subtotal ?? Number.NaN) + (t.items_discount ?? 0)).toBe(t.total);
          expect(t.total).toBe(lines.reduce((n, l) => n + l.totalCents, 0));
          for (const l of order.line_items)
            expect(l.item.price * l.quantity.original).toBe(byType(l.totals).subtotal ?? Number.NaN);
          expect(cents(t.total as number)).toBe(orderOf(session, status).total);
        },
      ),
      { numRuns: 150 },
    );
  });
});
