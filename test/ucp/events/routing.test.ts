/**
 * The routing of UCP order events, below HTTP, on the embedded store (PGlite): which order events
 * reach the platform (the checkout's view: nothing before it completes), to which URL (the
 * session's channel), once per event, and when a disabled endpoint becomes active again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../../harness/services.ts';
import { type Db, migrate } from '../../../lib/db/index.ts';
import { openPglite } from '../../../lib/db/pglite.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import { checkoutMigrations } from '../../../subgraphs/procurement/checkout/migrations.ts';
import type { CheckoutSession } from '../../../subgraphs/procurement/checkout/session.ts';
import { sqlCheckoutSessionStore } from '../../../subgraphs/procurement/checkout/sql.ts';
import {
  approve,
  checkoutRequest,
  type PurchaseOrder,
  shipment,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import {
  type OrderEventType,
  orderEvent,
  toCloudEvent,
} from '../../../subgraphs/procurement/outbox/order-events.ts';
import { orderMigrations } from '../../../subgraphs/procurement/store/migrations.ts';
import { sqlOrderStore } from '../../../subgraphs/procurement/store/sql.ts';
import { webhookMigrations } from '../../../subgraphs/procurement/webhooks/migrations.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../subgraphs/procurement/webhooks/service.ts';
import { sqlWebhookStore } from '../../../subgraphs/procurement/webhooks/store.ts';
import { createUcpRouting, type UcpRouting } from '../../../subgraphs/procurement/webhooks/ucp-routing.ts';
import { sqlUcpEndpointStore } from '../../../subgraphs/procurement/webhooks/ucp-store.ts';
import { cents } from '../../acp/support/webhooks.ts';
import { expectUcp } from '../support/validate.ts';
import { ucpSessionOf } from './support.ts';

const REST = 'https://shop.example.com/ucp';
let db: Db;
let routing: UcpRouting;
let n = 0;

beforeAll(async () => {
  db = await openPglite(undefined, TEST_PGLITE);
  await migrate(db, orderMigrations);
  await migrate(db, webhookMigrations);
  await migrate(db, checkoutMigrations);
  routing = createUcpRouting({
    sessions: sqlCheckoutSessionStore(db),
    orders: sqlOrderStore(db),
    endpoints: sqlUcpEndpointStore(db),
    db,
    eventTypes: WEBHOOK_EVENT_TYPES,
    restEndpoint: REST,
    checkTtlMs: 0,
  });
});
afterAll(() => db.close());

/** A completed session stored as the checkout service stores it, and its order in `status`. */
async function stored(
  o: {
    url?: string | null;
    protocol?: 'ucp' | 'acp';
    status?: PurchaseOrder['status'];
    pending?: boolean;
  } = {},
) {
  const url = o.url === undefined ? `https://platform-${++n}.example/webhooks/ucp/orders` : o.url;
  const base = ucpSessionOf(url === null ? {} : { orderWebhookUrl: url });
  const session: CheckoutSession = { ...base, protocol: o.protocol ?? 'ucp' };
  await sqlCheckoutSessionStore(db).insert(session);
  const lines = session.lines.map((l) => ({
    sku: l.sku,
    quantity: l.quantity,
    unitPrice: cents(l.unitCents),
    discount: cents(l.discountCents),
    lineTotal: cents(l.totalCents),
  }));
  const total = cents(session.totals.totalCents);
  const placed = approve(
    {
      request: checkoutRequest('agent-ucp-route-01', lines, total),
      spiffeId: session.owner,
      traceId: 't',
      lines,
      total,
      checkoutSessionId: session.id,
      ...(o.pending ? { approvalsRequired: 1 as const } : {}),
    },
    session.orderId as string,
    Date.now(),
  );
  const status = o.status ?? placed.status;
  const order: PurchaseOrder = {
    ...placed,
    status,
    ...(status === 'CANCELLED' ? { cancelledAt: Date.now() / 1000 } : {}),
  };
  await sqlOrderStore(db).insert(order, orderEvent(EventTypes.OrderPlaced, placed, Date.now()));
  return { session, order, url };
}

const eventOf = (type: OrderEventType, order: PurchaseOrder) =>
  toCloudEvent(orderEvent(type, order, Date.now()));

async function deliveriesTo(url: string) {
  return db.query<{ payload: string; event_id: string }>(
    `SELECT d.payload, d.event_id FROM webhook_deliveries d JOIN webhook_endpoints e USING (endpoint_id)
     WHERE e.ucp_webhook_url = $1 AND e.scheme = 'ucp'`,
    [url],
  );
}

describe('UCP order event routing', () => {
  it.each<[string, OrderEventType, { status?: PurchaseOrder['status']; pending?: boolean }, number]>([
    ['OrderPlaced of an approved order: sent (Order created)', EventTypes.OrderPlaced, {}, 1],
    [
      'OrderApprovalRequested: the checkout is not completed',
      EventTypes.OrderApprovalRequested,
      { pending: true },
      0,
    ],
    [
      'OrderApproved: the checkout completes now',
      EventTypes.OrderApproved,
      { pending: true, status: 'APPROVED' },
      1,
    ],
    [
      'OrderRejected: never an order for the platform',
      EventTypes.OrderRejected,
      { pending: true, status: 'REJECTED' },
      0,
    ],
    [
      'OrderExpired: never an order for the platform',
      EventTypes.OrderExpired,
      { pending: true, status: 'EXPIRED' },
      0,
    ],
    ['OrderCancelled of a confirmed order: sent', EventTypes.OrderCancelled, { status: 'CANCELLED' }, 1],
    [
      'OrderCancelled of an order never approved',
      EventTypes.OrderCancelled,
      { pending: true, status: 'CANCELLED' },
      0,
    ],
  ])('%s', async (_w, type, o, expected) => {
    const { order, url } = await stored(o);
    // OrderApproved and the cancel of an approved-later order: a decision was taken.
    const decided = type === EventTypes.OrderApproved ? { ...order, decidedAt: Date.now() / 1000 } : order;
    if (decided !== order)
      await db.query('UPDATE purchase_orders SET decided_at = $2 WHERE order_id = $1', [
        order.orderId,
        decided.decidedAt,
      ]);
    expect(await routing.route(eventOf(type, decided), new Date())).toBe(expected);
    const rows = await deliveriesTo(url as string);
    expect(rows).toHaveLength(expected);
    for (const r of rows) {
      const body = JSON.parse(r.payload) as { id: string; event_id: string };
      expectUcp('order', body);
      expect([body.id, body.event_id]).toEqual([order.orderId, r.event_id]);
    }
  });

  it('sends OrderShipped with the shipment as a fulfillment event', async () => {
    const { order, url } = await stored();
    const v = shipment(
      order,
      { shipmentId: 'shp_x', operator: 'ops', trackingNumber: '1Z', carrier: null, trackingUrl: null },
      Date.now(),
    );
    if (v.kind !== 'ship') throw new Error(v.kind);
    await sqlOrderStore(db).transition(v.next, [], {
      orderId: order.orderId,
      from: 'APPROVED',
      to: 'APPROVED',
      actor: 'ops',
      reason: null,
      at: 0,
    });
    expect(await routing.route(eventOf(EventTypes.OrderShipped, v.next), new Date())).toBe(1);
    const [row] = await deliveriesTo(url as string);
    expect(JSON.parse(row?.payload ?? '{}').fulfillment.events).toMatchObject([
      { id: 'shp_x', type: 'shipped', tracking_number: '1Z' },
    ]);
  });

  it('sends nothing for an ACP session, a UCP session without a webhook URL, or an order of another session', async () => {
    const acp = await stored({ protocol: 'acp' });
    expect(await routing.route(eventOf(EventTypes.OrderPlaced, acp.order), new Date())).toBe(0);
    const none = await stored({ url: null });
    expect(await routing.route(eventOf(EventTypes.OrderPlaced, none.order), new Date())).toBe(0);
    const other = await stored();
    const foreign = { ...other.order, orderId: `ord_${'f'.repeat(32)}` };
    expect(await routing.route(eventOf(EventTypes.OrderPlaced, foreign), new Date())).toBe(0);
  });

  it("routes by the order id the session's id gives: a row a crash left before its completion still gets its order", async () => {
    const { session, order, url } = await stored();
    // The embedded row after a crash lost the completion's write (cached.ts): no order id.
    await sqlCheckoutSessionStore(db).replace({ ...session, orderId: null, version: session.version + 1 });
    expect(await routing.route(eventOf(EventTypes.OrderPlaced, order), new Date())).toBe(1);
    const [row] = await deliveriesTo(url as string);
    expect(JSON.parse(row?.payload ?? '{}').id).toBe(order.orderId);
  });

  it('delivers an event once, however often it is routed (every replica routes every event)', async () => {
    const { order, url } = await stored();
    const event = eventOf(EventTypes.OrderPlaced, order);
    const counts = await Promise.all([1, 2, 3].map(() => routing.route(event, new Date())));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await deliveriesTo(url as string)).toHaveLength(1);
  });

  it('keeps a disabled endpoint disabled for older checkouts, and a checkout created after that activates it again', async () => {
    const first = await stored();
    await routing.route(eventOf(EventTypes.OrderPlaced, first.order), new Date());
    const webhooks = sqlWebhookStore(db);
    const endpoint = (await webhooks.listEndpoints(100)).find((e) => e.url === first.url);
    await webhooks.disableEndpoint(
      endpoint?.endpointId as string,
      'the receiver answered 410 Gone',
      new Date(),
    );
    // An event of the older checkout: not delivered.
    expect(
      await routing.route(
        eventOf(EventTypes.OrderCancelled, { ...first.order, status: 'CANCELLED' }),
        new Date(),
      ),
    ).toBe(0);
    await new Promise((r) => setTimeout(r, 5));
    const later = await stored({ url: first.url });
    expect(await routing.route(eventOf(EventTypes.OrderPlaced, later.order), new Date())).toBe(1);
    expect((await webhooks.listEndpoints(100)).find((e) => e.url === first.url)?.status).toBe('active');
  });
});
