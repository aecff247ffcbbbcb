/**
 * ACP order webhooks, below the HTTP API: the body of each order event (valid ACP Order, amounts
 * in cents), the Merchant-Signature checked by a platform's own verifier, and the routing on an
 * embedded store (PGlite) with a recording sender: a checkout order's events go to the webhook of
 * the key that created its session, to no other platform, and stop when the key is revoked.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { testConfig } from '../../harness/system.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { type CloudEvent, cloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { type CheckoutApiKey, checkoutApiKeysFor } from '../../subgraphs/procurement/api-keys/index.ts';
import { type CheckoutApiKeys, sqlCheckoutApiKeys } from '../../subgraphs/procurement/api-keys/store.ts';
import { orderIdOfSession, type SessionLine } from '../../subgraphs/procurement/checkout/session.ts';
import { sqlCheckoutSessionStore } from '../../subgraphs/procurement/checkout/sql.ts';
import type { OrderEventType } from '../../subgraphs/procurement/outbox/order-events.ts';
import { ACP_ORDER_EVENTS, acpOrderEvent } from '../../subgraphs/procurement/webhooks/acp-order.ts';
import { createAcpRouting } from '../../subgraphs/procurement/webhooks/acp-routing.ts';
import { merchantSignature } from '../../subgraphs/procurement/webhooks/acp-signature.ts';
import {
  type AcpEndpointStore,
  sqlAcpEndpointStore,
} from '../../subgraphs/procurement/webhooks/acp-store.ts';
import { createWebhooks, type Webhooks } from '../../subgraphs/procurement/webhooks/index.ts';
import { webhookMigrations } from '../../subgraphs/procurement/webhooks/migrations.ts';
import { newSigningSecret } from '../../subgraphs/procurement/webhooks/secret.ts';
import { httpSender, type SendResult } from '../../subgraphs/procurement/webhooks/sender.ts';
import { sqlWebhookStore, type WebhookStore } from '../../subgraphs/procurement/webhooks/store.ts';
import type { ClaimedDelivery } from '../../subgraphs/procurement/webhooks/types.ts';
import { type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';
import { expectAcp } from './support/validate.ts';
import { dataOf, sessionOf, verifyMerchantSignature, webhookEventViolations } from './support/webhooks.ts';

const ORIGIN = 'https://shop.example.com';
const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/acp-hooks';

type Body = { type: string; data: Record<string, unknown> & { line_items: Record<string, unknown>[] } };
const totalsOf = (b: Body) =>
  Object.fromEntries((b.data.totals as { type: string; amount: number }[]).map((t) => [t.type, t.amount]));

describe('the ACP body of an order event', () => {
  // The order event (and the order's status it carries) → the ACP event type and Order status.
  const rows: [string, string, string, OrderEventType, string][] = [
    ['OrderPlaced', 'order_create', 'confirmed', EventTypes.OrderPlaced, 'APPROVED'],
    [
      'OrderApprovalRequested',
      'order_create',
      'manual_review',
      EventTypes.OrderApprovalRequested,
      'PENDING_APPROVAL',
    ],
    ['OrderApproved', 'order_update', 'confirmed', EventTypes.OrderApproved, 'APPROVED'],
    ['OrderRejected', 'order_update', 'canceled', EventTypes.OrderRejected, 'REJECTED'],
    ['OrderExpired', 'order_update', 'canceled', EventTypes.OrderExpired, 'EXPIRED'],
    ['OrderCancelled', 'order_update', 'canceled', EventTypes.OrderCancelled, 'CANCELLED'],
  ];

  it('maps exactly the six order events', () => {
    expect(Object.keys(ACP_ORDER_EVENTS).sort()).toEqual(rows.map((r) => r[3]).sort());
  });

  it.each(rows)(
    '%s is %s with status %s: a valid ACP Order in a valid WebhookEvent',
    (_n, acpType, status, type, orderStatus) => {
      const s = sessionOf('ak_000000000000000000000001');
      const body = acpOrderEvent(type, dataOf(s, orderStatus), s, ORIGIN) as Body;
      expect(body.type).toBe(acpType);
      expect(body.data).toMatchObject({
        type: 'order',
        id: s.orderId,
        checkout_session_id: s.id,
        permalink_url: `${ORIGIN}/checkout_sessions/${s.id}`,
        client_reference_id: 'PO-2026-0042',
        status,
      });
      expectAcp('Order', body.data);
      // The webhook OpenAPI's Order is an older copy without client_reference_id (the bundle's
      // README, quirk 8): that property is the only thing it refuses.
      expect(webhookEventViolations(body)).toEqual([
        '/data must NOT have additional properties {"additionalProperty":"client_reference_id"}',
      ]);
      const { client_reference_id: _c, ...data } = body.data;
      expect(webhookEventViolations({ ...body, data })).toEqual([]);
    },
  );

  it("takes the amounts from the order, in cents, and the titles and line ids from the session's rendering", () => {
    const s = sessionOf('ak_000000000000000000000001');
    const body = acpOrderEvent(EventTypes.OrderPlaced, dataOf(s), s, ORIGIN) as Body;
    expect(body.data.line_items).toEqual([
      {
        id: 'li_0',
        title: 'Widget',
        product_id: 'SKU-ABC-000001',
        quantity: { ordered: 2, current: 2, fulfilled: 0 },
        unit_price: 1250,
        subtotal: 2250,
        status: 'processing',
      },
      {
        id: 'li_2',
        title: 'Cable',
        product_id: 'SKU-ELC-000004',
        quantity: { ordered: 3, current: 3, fulfilled: 0 },
        unit_price: 999,
        subtotal: 2997,
        status: 'processing',
      },
    ]);
    expect(totalsOf(body)).toEqual({
      items_base_amount: 5497,
      items_discount: 250,
      subtotal: 5247,
      total: 5247,
    });
  });

  it('shows a canceled order with what was ordered and nothing current', () => {
    const s = sessionOf('ak_000000000000000000000001');
    const body = acpOrderEvent(EventTypes.OrderRejected, dataOf(s, 'REJECTED'), s, ORIGIN) as Body;
    for (const l of body.data.line_items) {
      expect(l.quantity).toMatchObject({ current: 0 });
      expect(l.status).toBe('removed');
    }
    expect(totalsOf(body).total).toBe(5247);
  });

  it('names a line the session does not have at that place by its SKU, and omits an absent purchase order number', () => {
    const s = { ...sessionOf('ak_000000000000000000000001'), purchaseOrderNumber: null };
    const data = dataOf(s);
    const swapped = { ...data, lines: [...(data.lines ?? [])].reverse() };
    const body = acpOrderEvent(EventTypes.OrderPlaced, swapped, s, ORIGIN) as Body;
    expect(body.data.line_items.map((l) => [l.id, l.title])).toEqual([
      ['li_0', 'SKU-ELC-000004'],
      ['li_1', 'SKU-ABC-000001'],
    ]);
    expect(body.data).not.toHaveProperty('client_reference_id');
    expectAcp('Order', body.data);
  });

  it('keeps every amount an integer and the totals consistent with the lines (property)', () => {
    const line = fc.record({
      quantity: fc.integer({ min: 1, max: 10_000 }),
      unitCents: fc.integer({ min: 0, max: 10_000_000 }),
      discountPermille: fc.integer({ min: 0, max: 1000 }),
    });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 50 }), (raw) => {
        const lines: SessionLine[] = raw.map((r, i) => {
          const baseCents = r.unitCents * r.quantity;
          const discountCents = Math.floor((baseCents * r.discountPermille) / 1000);
          return {
            item: i,
            sku: `SKU-ABC-${String(i + 1).padStart(6, '0')}`,
            name: `Item ${i}`,
            quantity: r.quantity,
            unitCents: r.unitCents,
            baseCents,
            discountCents,
            totalCents: baseCents - discountCents,
          };
        });
        const s = sessionOf('ak_000000000000000000000001', lines);
        const body = acpOrderEvent(EventTypes.OrderPlaced, dataOf(s), s, ORIGIN) as Body;
        const t = totalsOf(body);
        expect(t.total).toBe(s.totals.totalCents);
        expect(t.subtotal).toBe(body.data.line_items.reduce((n, l) => n + (l.subtotal as number), 0));
        expect((t.items_base_amount as number) - (t.items_discount as number)).toBe(t.subtotal);
        expect(body.data.line_items.map((l) => l.unit_price)).toEqual(lines.map((l) => l.unitCents));
        expectAcp('Order', body.data);
      }),
      { numRuns: 100 },
    );
  });
});

describe('Merchant-Signature', () => {
  const secret = newSigningSecret();
  const body = '{"type":"order_create","data":{"type":"order","id":"ord_1"}}';
  const now = new Date();

  it("has the spec's format and passes a platform's own verifier", () => {
    const header = merchantSignature(secret, body, now);
    expect(header).toMatch(/^t=\d+,v1=[a-fA-F0-9]{64}$/);
    expect(header.startsWith(`t=${Math.floor(now.getTime() / 1000)},`)).toBe(true);
    expect(verifyMerchantSignature(header, body, secret)).toBe(true);
  });

  type Change = (header: string) => [header: string, body: string, secret: string];
  it.each<[string, Change]>([
    ['a changed body', (h: string) => [h, body.replace('ord_1', 'ord_2'), secret]],
    ['another secret', (h: string) => [h, body, newSigningSecret()]],
    ['the secret without its whsec_ prefix', (h: string) => [h, body, secret.slice(6)]],
    [
      'a changed timestamp',
      (h: string) => [h.replace(/^t=(\d+)/, (_m, t) => `t=${Number(t) + 1}`), body, secret],
    ],
    ['a changed hex digit', (h: string) => [h.replace(/.$/, (c) => (c === '0' ? '1' : '0')), body, secret]],
    ['two signatures', (h: string) => [`${h},v1=${'0'.repeat(64)}`, body, secret]],
  ])('fails the verifier with %s', (_w, change) => {
    const [h, b, s] = change(merchantSignature(secret, body, now));
    expect(verifyMerchantSignature(h, b, s)).toBe(false);
  });

  it('fails the verifier once its timestamp is more than 300 seconds old', () => {
    const header = merchantSignature(secret, body, new Date(now.getTime() - 301_000));
    expect(verifyMerchantSignature(header, body, secret, now.getTime())).toBe(false);
  });
});

describe('the sender with an ACP endpoint', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('posts the stored body as application/json with Merchant-Signature, Request-Id and Timestamp, and no Standard Webhooks headers', async () => {
    receiver = await startReceiver([200]);
    const secret = newSigningSecret();
    const d: ClaimedDelivery = {
      deliveryId: 'whd_0123456789abcdef0123456789abcdef',
      endpointId: 'whe_0123456789abcdef0123456789abcdef',
      eventId: 'evt-acp-1',
      payload: '{"type":"order_create","data":{"type":"order"}}',
      attempt: 1,
      createdAt: new Date(),
      claim: 1,
      url: receiver.url,
      secrets: [secret],
      scheme: 'acp',
    };
    const sender = httpSender({ timeoutMs: 2000, allowPrivate: true });
    try {
      const sentAt = new Date();
      expect(await sender.send(d, sentAt)).toEqual({ statusCode: 200 });
    } finally {
      await sender.close();
    }
    const [got] = receiver.received;
    expect(got?.body).toBe(d.payload);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['request-id']).toBe('evt-acp-1');
    expect(Date.parse(String(got?.headers.timestamp))).not.toBeNaN();
    expect(verifyMerchantSignature(got?.headers['merchant-signature'], got?.body ?? '', secret)).toBe(true);
    expect(Object.keys(got?.headers ?? {}).filter((h) => h.startsWith('webhook-'))).toEqual([]);
  });
});

/** The ACP endpoint store on both SQL stores: PGlite (embedded) and Postgres (distributed). */
describe.each<[string, () => Promise<{ db: Db; drop(): Promise<void> }>]>([
  ['PGlite', async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} })],
  [
    'Postgres',
    async () => {
      const pg = await freshPostgres('acp_endpoints');
      return { db: await openPostgres(pg.url, 4), drop: pg.drop };
    },
  ],
])('the ACP endpoint store on %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let acp: AcpEndpointStore;
  let store: WebhookStore;
  const T0 = new Date('2026-01-01T00:00:00Z');
  const types = [EventTypes.OrderPlaced, EventTypes.OrderApproved];
  const eventOf = () => cloudEvent('/test', EventTypes.OrderPlaced, { order_id: 'ord_1' }, 'ord_1', T0);
  const endpointOf = async (apiKeyId: string) =>
    (await store.listEndpoints(100)).find((e) => e.apiKeyId === apiKeyId);

  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrate(db, webhookMigrations);
    acp = sqlAcpEndpointStore(db);
    store = sqlWebhookStore(db);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('keeps one endpoint per key: created once, given a new URL or secret, left alone by the same ones', async () => {
    const key = 'ak_00000000000000000000000a';
    await Promise.all([
      acp.upsert({ apiKeyId: key, url: 'https://p.example/a', secret: 's1', eventTypes: types, now: T0 }),
      acp.upsert({ apiKeyId: key, url: 'https://p.example/a', secret: 's1', eventTypes: types, now: T0 }),
    ]);
    const first = await endpointOf(key);
    expect(first).toMatchObject({ scheme: 'acp', status: 'active', url: 'https://p.example/a' });
    expect((await store.listEndpoints(100)).filter((e) => e.apiKeyId === key)).toHaveLength(1);
    await store.disableEndpoint(first?.endpointId as string, 'the receiver answered 410 Gone', T0);
    await acp.upsert({ apiKeyId: key, url: 'https://p.example/a', secret: 's1', eventTypes: types, now: T0 });
    expect(await acp.activeEndpointOf(key)).toBeNull();
    await acp.upsert({ apiKeyId: key, url: 'https://p.example/a', secret: 's2', eventTypes: types, now: T0 });
    expect(await acp.activeEndpointOf(key)).toBe(first?.endpointId);
    expect(await store.countEndpoints()).toBe(0);
  });

  it("inserts one delivery per event for the key's active endpoint only, never for an operator's", async () => {
    const [a, b] = ['ak_00000000000000000000000b', 'ak_00000000000000000000000c'];
    for (const k of [a, b])
      await acp.upsert({
        apiKeyId: k,
        url: `https://p.example/${k}`,
        secret: 's',
        eventTypes: types,
        now: T0,
      });
    const event = eventOf();
    expect(await acp.enqueue(a, event, '{"type":"order_create"}', T0)).toBe(1);
    expect(await acp.enqueue(a, event, '{"type":"order_create"}', T0)).toBe(0);
    // The operators' fan-out does not reach ACP endpoints.
    expect(await store.enqueue(event, T0)).toBe(0);
    const [claimed, ...more] = await store.claimDue(T0, new Date(T0.getTime() + 60_000), 10);
    expect(more).toEqual([]);
    expect(claimed).toMatchObject({
      endpointId: (await endpointOf(a))?.endpointId,
      payload: '{"type":"order_create"}',
      scheme: 'acp',
      secrets: ['s'],
    });
    expect(
      await store.listDeliveries({ endpointId: (await endpointOf(b))?.endpointId as string, limit: 10 }),
    ).toEqual([]);
    await expect(store.rotateSecret((await endpointOf(a))?.endpointId as string, 'x', T0)).rejects.toThrow(
      /setCheckoutWebhook/,
    );
  });
});

describe('routing on the embedded store', () => {
  let platform: Platform;
  let webhooks: Webhooks;
  let keys: CheckoutApiKeys;
  const sent: { d: ClaimedDelivery; at: Date }[] = [];
  let answer: SendResult = { statusCode: 200 };
  const sessions = () => sqlCheckoutSessionStore(platform.db);

  beforeAll(async () => {
    platform = await createPlatform(
      testConfig({
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '50',
        WEBHOOK_RETRY_BASE_MS: '10000',
      }),
      { service: 'procurement' },
    );
    webhooks = await createWebhooks(platform, {
      // A webhook set through another store (another replica) is seen at the next event, not
      // within the 5 s bound: each test then stands alone (the bound is tested with fakes).
      acpSyncTtlMs: 0,
      sender: {
        send: async (d, at) => {
          sent.push({ d, at });
          return answer;
        },
        close: async () => {},
      },
    });
    keys = await checkoutApiKeysFor(platform);
  });
  afterAll(async () => {
    await webhooks?.close();
    await platform?.close();
  });

  let platforms = 0;
  async function platformKey(url?: string) {
    const n = ++platforms;
    const { apiKey } = await keys.issue(
      {
        name: `Platform ${n}`,
        spiffeId: `${SPIFFE}/p${n}`,
        agentId: `agent-acp-route-${String(n).padStart(2, '0')}`,
        scopes: ['orders:create'],
      },
      'ops',
    );
    const secret = newSigningSecret();
    if (url) await keys.setWebhook(apiKey.id, url, secret);
    return { id: apiKey.id, secret };
  }
  async function placeFor(
    keyId: string | null,
    type: OrderEventType = EventTypes.OrderPlaced,
    status = 'APPROVED',
  ) {
    const s = sessionOf(keyId);
    await sessions().insert(s);
    return { session: s, event: await platform.bus.publish(type, dataOf(s, status), s.orderId as string) };
  }
  const sentOf = (event: CloudEvent) => sent.filter((x) => x.d.eventId === event.id);
  const endpointOf = async (keyId: string) => {
    const found = (await webhooks.admin.endpoints()).find((e) => e.apiKeyId === keyId);
    if (!found) throw new Error(`no endpoint for ${keyId}`);
    return found;
  };

  it("creates the key's ACP endpoint when its webhook is set; operators see it, it does not count against their limit", async () => {
    const before = await webhooks.store.countEndpoints();
    const a = await platformKey('http://127.0.0.1:9/platform-a');
    const endpoint = await endpointOf(a.id);
    expect(endpoint).toMatchObject({
      url: 'http://127.0.0.1:9/platform-a',
      scheme: 'acp',
      status: 'active',
      description: `ACP order webhooks of checkout API key ${a.id}`,
    });
    expect(await webhooks.store.countEndpoints()).toBe(before);
    // Set again: the same endpoint, the new URL.
    await keys.setWebhook(a.id, 'http://127.0.0.1:9/platform-a2', newSigningSecret());
    expect(await endpointOf(a.id)).toMatchObject({
      endpointId: endpoint.endpointId,
      url: 'http://127.0.0.1:9/platform-a2',
    });
  });

  it('sends a checkout order only to the platform whose key created the session; operators get their CloudEvent', async () => {
    const a = await platformKey('http://127.0.0.1:9/a');
    const b = await platformKey('http://127.0.0.1:9/b');
    const operator = await webhooks.admin.register({
      url: 'http://127.0.0.1:9/erp',
      eventTypes: [EventTypes.OrderPlaced],
    });
    const { session, event } = await placeFor(a.id);
    await waitFor('both deliveries', () => sentOf(event).length >= 2);
    await new Promise((r) => setTimeout(r, 150));
    const got = sentOf(event);
    expect(got.map((x) => [x.d.endpointId, x.d.scheme]).sort()).toEqual(
      [
        [(await endpointOf(a.id)).endpointId, 'acp'],
        [operator.endpoint.endpointId, 'standard-webhooks'],
      ].sort(),
    );
    const acp = got.find((x) => x.d.scheme === 'acp')?.d as ClaimedDelivery;
    expect(acp.secrets).toEqual([a.secret]);
    const body = JSON.parse(acp.payload) as Body;
    expect(body).toMatchObject({
      type: 'order_create',
      data: { id: session.orderId, checkout_session_id: session.id },
    });
    expectAcp('Order', body.data);
    expect(JSON.parse(got.find((x) => x.d.scheme !== 'acp')?.d.payload ?? '{}')).toMatchObject({
      id: event.id,
    });
    // Platform b has a webhook too, and gets nothing of a's order.
    const bEndpoint = (await endpointOf(b.id)).endpointId;
    expect(sent.filter((x) => x.d.endpointId === bEndpoint)).toEqual([]);
    expect(await webhooks.admin.deliveries({ endpointId: bEndpoint })).toEqual([]);
    await webhooks.admin.disable(operator.endpoint.endpointId);
  });

  it('sends nothing to a platform for an order without a session, a session without a key, or a key without a webhook', async () => {
    const bare = await platformKey();
    const events = [
      await platform.bus.publish(EventTypes.OrderPlaced, { order_id: 'ord_x', status: 'APPROVED' }, 'ord_x'),
      (await placeFor(null)).event,
      (await placeFor(bare.id)).event,
    ];
    const control = (await placeFor((await platformKey('http://127.0.0.1:9/c')).id)).event;
    await waitFor('the control delivery', () => sentOf(control).length === 1);
    for (const e of events) expect(sentOf(e)).toEqual([]);
  });

  it("routes by the order id the session's id gives: a row a crash left before its completion still gets its order's event, another order id none", async () => {
    const key = await platformKey('http://127.0.0.1:9/crash');
    // The embedded row after a crash lost the completion's write (cached.ts): no order id, no PO number.
    const s = {
      ...sessionOf(key.id),
      status: 'ready_for_payment' as const,
      orderId: null,
      purchaseOrderNumber: null,
    };
    await sessions().insert(s);
    const ours = await platform.bus.publish(
      EventTypes.OrderPlaced,
      { ...dataOf({ ...s, orderId: orderIdOfSession(s.id) }) },
      orderIdOfSession(s.id),
    );
    const stranger = await platform.bus.publish(
      EventTypes.OrderPlaced,
      { ...dataOf({ ...s, orderId: 'ord_00000000000000000000000000000000' }) },
      'ord_00000000000000000000000000000000',
    );
    await waitFor('the delivery of its own order', () => sentOf(ours).length === 1);
    const body = JSON.parse(sentOf(ours)[0]?.d.payload ?? '{}') as Body;
    expect(body.data).toMatchObject({ id: orderIdOfSession(s.id), checkout_session_id: s.id });
    expect(body.data).not.toHaveProperty('client_reference_id');
    expect(sentOf(stranger)).toEqual([]);
  });

  it('creates the endpoint when routing, for a webhook set through a store with no listener (another process)', async () => {
    const other = sqlCheckoutApiKeys(platform.db, {
      clock: platform.clock,
      trustDomains: platform.config.SPIFFE_TRUST_DOMAINS,
      allowPrivateUrls: true,
    });
    const a = await platformKey();
    const secret = newSigningSecret();
    await other.setWebhook(a.id, 'http://127.0.0.1:9/elsewhere', secret);
    expect((await webhooks.admin.endpoints()).some((e) => e.apiKeyId === a.id)).toBe(false);
    const { event } = await placeFor(a.id);
    await waitFor('the delivery', () => sentOf(event).length === 1);
    expect(sentOf(event)[0]?.d).toMatchObject({
      url: 'http://127.0.0.1:9/elsewhere',
      secrets: [secret],
      scheme: 'acp',
    });
  });

  it('creates one delivery per event, however often it is routed (every replica routes every event)', async () => {
    const a = await platformKey('http://127.0.0.1:9/once');
    const { event } = await placeFor(a.id);
    await platform.bus.publishEvent(event);
    await platform.bus.publishEvent(event);
    await waitFor('the delivery', () => sentOf(event).length === 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(sentOf(event)).toHaveLength(1);
    const rows = await platform.db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [event.id]);
    expect(rows).toHaveLength(1);
  });

  it("fails a revoked key's pending deliveries, disables its endpoint and routes nothing more to it", async () => {
    const a = await platformKey('http://127.0.0.1:9/revoked');
    answer = { statusCode: 503 };
    try {
      const { event } = await placeFor(a.id);
      await waitFor('a first attempt', () => sentOf(event).length === 1);
      const endpoint = await endpointOf(a.id);
      await keys.revoke(a.id, 'ops');
      expect(await endpointOf(a.id)).toMatchObject({
        status: 'disabled',
        disabledReason: 'the checkout API key was revoked',
      });
      const [delivery] = await webhooks.admin.deliveries({ endpointId: endpoint.endpointId });
      expect(delivery).toMatchObject({
        status: 'failed',
        lastError: 'endpoint disabled: the checkout API key was revoked',
      });
      const late = (await placeFor(a.id)).event;
      await new Promise((r) => setTimeout(r, 150));
      expect(sentOf(late)).toEqual([]);
    } finally {
      answer = { statusCode: 200 };
    }
  });

  it('keeps an endpoint disabled by 410 Gone until the webhook is set again, and refuses to rotate its secret', async () => {
    const a = await platformKey('http://127.0.0.1:9/gone');
    answer = { statusCode: 410 };
    try {
      const first = (await placeFor(a.id)).event;
      await waitFor('the 410', async () => (await endpointOf(a.id)).status === 'disabled');
      expect(sentOf(first)).toHaveLength(1);
    } finally {
      answer = { statusCode: 200 };
    }
    // Routing syncs the key again: the same URL and secret leave the endpoint disabled.
    const ignored = (await placeFor(a.id)).event;
    await new Promise((r) => setTimeout(r, 150));
    expect(sentOf(ignored)).toEqual([]);
    expect((await endpointOf(a.id)).status).toBe('disabled');
    await expect(webhooks.admin.rotateSecret((await endpointOf(a.id)).endpointId)).rejects.toThrow(
      /setCheckoutWebhook/,
    );

    const secret = newSigningSecret();
    await keys.setWebhook(a.id, 'http://127.0.0.1:9/back', secret);
    expect(await endpointOf(a.id)).toMatchObject({ status: 'active', disabledReason: null });
    const next = (await placeFor(a.id)).event;
    await waitFor('the delivery after the new webhook', () => sentOf(next).length === 1);
    expect(sentOf(next)[0]?.d).toMatchObject({ url: 'http://127.0.0.1:9/back', secrets: [secret] });
  });

  it('signs a retry with the secret the key has at that attempt', async () => {
    const a = await platformKey('http://127.0.0.1:9/rotating');
    answer = { statusCode: 500 };
    let event: CloudEvent;
    try {
      event = (await placeFor(a.id)).event;
      await waitFor('a first attempt', () => sentOf(event).length === 1);
    } finally {
      answer = { statusCode: 200 };
    }
    const secret = newSigningSecret();
    await keys.setWebhook(a.id, 'http://127.0.0.1:9/rotating', secret);
    const endpoint = await endpointOf(a.id);
    const [pending] = await webhooks.admin.deliveries({ endpointId: endpoint.endpointId });
    // Due now rather than after the backoff.
    await platform.db.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE delivery_id = $1', [
      pending?.deliveryId,
    ]);
    webhooks.worker.kick();
    await waitFor('the retry', () => sentOf(event).length === 2);
    expect(sentOf(event)[1]?.d.secrets).toEqual([secret]);
  });
});

describe('routing reads a session only while some key has a webhook', () => {
  const T0 = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(T0.getTime() + ms);
  const KEY = 'ak_0000000000000000000000d1';

  function routingWith(webhook: CheckoutApiKey['webhook']) {
    const key: { -readonly [K in keyof CheckoutApiKey]: CheckoutApiKey[K] } = {
      id: KEY,
      name: 'Platform',
      spiffeId: `${SPIFFE}/reads`,
      agentId: 'agent-acp-reads-01',
      scopes: ['orders:create'],
      createdAt: 0,
      createdBy: 'ops',
      revokedAt: null,
      revokedBy: null,
      webhook,
      ucpProfile: null,
    };
    const count = { listings: 0, sessionReads: 0, deliveries: 0 };
    const session = sessionOf(KEY);
    const routing = createAcpRouting({
      endpoints: {
        upsert: async () => {},
        activeEndpointOf: async () => null,
        enqueue: async () => ++count.deliveries && 1,
      },
      keys: {
        list: async () => {
          count.listings++;
          return [key];
        },
        webhookOf: async () => (key.webhook ? { url: key.webhook.url, secret: 'whsec_x' } : null),
      },
      sessions: {
        get: async () => {
          count.sessionReads++;
          return session;
        },
      },
      eventTypes: [EventTypes.OrderPlaced],
      origin: ORIGIN,
      disable: async () => {},
      syncTtlMs: 5_000,
    });
    const placed = (when: Date) =>
      routing.route(
        cloudEvent('/test', EventTypes.OrderPlaced, dataOf(session), session.orderId as string, when),
        when,
      );
    return { key, count, routing, placed };
  }

  it('reads no session and lists the keys once per trust bound while no key has a webhook', async () => {
    const { count, routing, placed } = routingWith(null);
    await routing.syncAll(T0);
    for (let i = 0; i < 50; i++) expect(await placed(at(i * 10))).toBe(0);
    expect(count).toEqual({ listings: 1, sessionReads: 0, deliveries: 0 });
    await Promise.all([placed(at(5_001)), placed(at(5_002))]);
    expect(count).toEqual({ listings: 2, sessionReads: 0, deliveries: 0 });
  });

  it('sees a webhook set through another replica within the trust bound, and one set here at once', async () => {
    const { key, count, routing, placed } = routingWith(null);
    await routing.syncAll(T0);
    key.webhook = { url: 'https://platform.example/hooks', secretSet: true };
    expect(await placed(at(1_000))).toBe(0);
    expect(await placed(at(5_001))).toBe(1);
    expect(count).toMatchObject({ sessionReads: 1, deliveries: 1 });

    const here = routingWith(null);
    await here.routing.syncAll(T0);
    here.key.webhook = { url: 'https://platform.example/hooks', secretSet: true };
    await here.routing.sync(KEY, at(10));
    expect(await here.placed(at(20))).toBe(1);
  });

  it('reads again after a revocation in this process, and stops once no key has a webhook', async () => {
    const { key, count, routing, placed } = routingWith({
      url: 'https://platform.example/hooks',
      secretSet: true,
    });
    await routing.syncAll(T0);
    expect(await placed(at(10))).toBe(1);
    key.revokedAt = 1;
    key.webhook = null;
    await routing.sync(KEY, at(20));
    expect(await placed(at(30))).toBe(0);
    expect(await placed(at(40))).toBe(0);
    expect(count.sessionReads).toBe(1);
  });
});
