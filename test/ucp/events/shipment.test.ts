/**
 * Shipments the merchant records (the operator path UCP's order events show as fulfillment
 * events): the pure rule, and the order domain on the memory store, Postgres and PGlite, with
 * its OrderShipped outbox event valid against schemas/events/order-shipped.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/clock.ts';
import type { Db } from '../../../lib/db/index.ts';
import type { CloudEvent } from '../../../lib/events/cloudevent.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import { createOrderDomain } from '../../../subgraphs/procurement/domain/order-domain.ts';
import {
  approve,
  checkoutRequest,
  type OrderLine,
  type PurchaseOrder,
  shipment,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import { toCloudEvent } from '../../../subgraphs/procurement/outbox/order-events.ts';
import { memoryOrderStore } from '../../../subgraphs/procurement/store/memory.ts';
import { sqlOrderStore, sqlOutbox } from '../../../subgraphs/procurement/store/sql.ts';
import type { OrderStore, OutboxStore } from '../../../subgraphs/procurement/store/store.ts';
import { eventSchema } from '../../pricing/support.ts';
import { type OrderDbs, openOrderDbs } from '../../support/order-stores.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ship';
const LINES: OrderLine[] = [
  { sku: 'SKU-ABC-000001', quantity: 2, unitPrice: '12.50', discount: '2.50', lineTotal: '22.50' },
  { sku: 'SKU-ELC-000004', quantity: 3, unitPrice: '9.99', discount: '0.00', lineTotal: '29.97' },
];
const TOTAL = '52.47';
const shippedSchema = eventSchema('order-shipped.json');

const checkoutOrder = (status: PurchaseOrder['status'] = 'APPROVED'): PurchaseOrder => ({
  ...approve(
    {
      request: checkoutRequest('agent-ucp-ship-01', LINES, TOTAL),
      spiffeId: AGENT,
      traceId: 't',
      lines: LINES,
      total: TOTAL,
      checkoutSessionId: 'cs_0123456789abcdef0123456789abcdef',
    },
    'ord_0123456789abcdef0123456789abcdef',
    1_775_725_200_000,
  ),
  status,
});
const ship = {
  shipmentId: 'shp_1',
  operator: 'ops',
  trackingNumber: '1Z1',
  carrier: 'UPS',
  trackingUrl: null,
};

describe('shipment (pure)', () => {
  it('ships everything left when no lines are named', () => {
    const v = shipment(checkoutOrder(), ship, 1_775_728_800_000);
    expect(v.kind).toBe('ship');
    if (v.kind !== 'ship') return;
    expect(v.shipment.lines).toEqual([
      { line: 0, quantity: 2 },
      { line: 1, quantity: 3 },
    ]);
    expect(v.next.version).toBe(1);
    expect(v.next.shipments).toHaveLength(1);
  });

  it.each<[string, PurchaseOrder['status']]>([
    ['pending', 'PENDING_APPROVAL'],
    ['cancelled', 'CANCELLED'],
    ['rejected', 'REJECTED'],
    ['expired', 'EXPIRED'],
  ])('refuses a %s order', (_n, status) => {
    expect(shipment(checkoutOrder(status), ship, 0).kind).toBe('not-shippable');
  });

  it.each<[string, { line: number; quantity: number }[], string]>([
    ['an unknown line', [{ line: 2, quantity: 1 }], 'lines[0].line'],
    ['a negative line', [{ line: -1, quantity: 1 }], 'lines[0].line'],
    [
      'a line twice',
      [
        { line: 0, quantity: 1 },
        { line: 0, quantity: 1 },
      ],
      'lines[1].line',
    ],
    ['more than ordered', [{ line: 1, quantity: 4 }], 'lines[0].quantity'],
    ['zero units', [{ line: 1, quantity: 0 }], 'lines[0].quantity'],
    ['a fraction', [{ line: 1, quantity: 1.5 }], 'lines[0].quantity'],
  ])('refuses %s, naming the field', (_n, lines, field) => {
    const v = shipment(checkoutOrder(), { ...ship, lines }, 0);
    expect(v).toMatchObject({ kind: 'invalid', field });
  });

  it('ships in parts, then refuses more than is left and a full order; the same tracking number is a repeat', () => {
    const first = shipment(checkoutOrder(), { ...ship, lines: [{ line: 1, quantity: 2 }] }, 0);
    if (first.kind !== 'ship') throw new Error(first.kind);
    expect(
      shipment(first.next, { ...ship, trackingNumber: '1Z2', lines: [{ line: 1, quantity: 2 }] }, 0),
    ).toMatchObject({ kind: 'invalid', field: 'lines[0].quantity' });
    expect(shipment(first.next, { ...ship, lines: [{ line: 0, quantity: 1 }] }, 0).kind).toBe('repeat');
    const rest = shipment(first.next, { ...ship, trackingNumber: '1Z2' }, 0);
    if (rest.kind !== 'ship') throw new Error(rest.kind);
    expect(rest.shipment.lines).toEqual([
      { line: 0, quantity: 2 },
      { line: 1, quantity: 1 },
    ]);
    expect(shipment(rest.next, { ...ship, trackingNumber: '1Z3' }, 0).kind).toBe('not-shippable');
  });
});

let dbs: OrderDbs;
let db: Db;
let lite: Db;
beforeAll(async () => {
  dbs = await openOrderDbs('ucp_ship');
  ({ db, lite } = dbs);
});
afterAll(() => dbs?.close());

const adapters: [string, () => { store: OrderStore; outbox: OutboxStore }][] = [
  [
    'memory',
    () => {
      const m = memoryOrderStore();
      return { store: m, outbox: m.outbox };
    },
  ],
  ['sql (Postgres)', () => ({ store: sqlOrderStore(db), outbox: sqlOutbox(db) })],
  ['sql (embedded PGlite)', () => ({ store: sqlOrderStore(lite), outbox: sqlOutbox(lite) })],
];

describe.each(adapters)('recording a shipment, %s store', (_name, make) => {
  it('stores it with the order, writes one OrderShipped, and a repeat writes nothing', async () => {
    const { store, outbox } = make();
    const clock = new ManualClock(1_775_725_200_000);
    const domain = createOrderDomain(store, clock);
    const placed = await domain.place({
      request: checkoutRequest('agent-ucp-ship-01', LINES, TOTAL),
      spiffeId: AGENT,
      traceId: 't',
      lines: LINES,
      total: TOTAL,
      checkoutSessionId: `cs_${'ab'.repeat(16)}`,
    });
    const events: CloudEvent[] = [];
    const drain = () =>
      outbox.relay(100, async (e) => {
        events.push(toCloudEvent(e));
      });
    await drain();
    clock.advance(60_000);
    const shipped = await domain.ship(placed.order_id, {
      operator: 'ops-1',
      trackingNumber: '1ZSHIP',
      carrier: 'UPS',
      trackingUrl: 'https://carrier.example/t/1ZSHIP',
      lines: [{ line: 0, quantity: 2 }],
    });
    expect(shipped).toMatchObject({ kind: 'shipped', changed: true });
    const read = await domain.get(placed.order_id);
    expect(read?.shipments).toEqual([
      {
        shipmentId: expect.stringMatching(/^shp_[0-9a-f]{32}$/),
        at: 1_775_725_260,
        operator: 'ops-1',
        trackingNumber: '1ZSHIP',
        carrier: 'UPS',
        trackingUrl: 'https://carrier.example/t/1ZSHIP',
        lines: [{ line: 0, quantity: 2 }],
      },
    ]);
    expect(await domain.ship(placed.order_id, { ...ship, trackingNumber: '1ZSHIP' })).toMatchObject({
      kind: 'shipped',
      changed: false,
    });
    await drain();
    const shippedEvents = events.filter((e) => e.type === EventTypes.OrderShipped);
    expect(shippedEvents).toHaveLength(1);
    const event = shippedEvents[0];
    if (!event) throw new Error('no OrderShipped event');
    expect(shippedSchema(event), JSON.stringify(shippedSchema.errors)).toBe(true);
    expect((event.data as { shipment: unknown }).shipment).toMatchObject({
      tracking_number: '1ZSHIP',
      lines: [{ line: 0, quantity: 2 }],
    });
    expect(await domain.ship(`ord_${'0'.repeat(32)}`, ship)).toEqual({ kind: 'not-found' });
  });
});
