/**
 * UCP order events as a platform receives them, on a running topology: a Node port of
 * Universal-Commerce-Protocol/conformance's webhook tests (webhook_test.py: webhook_event_stream,
 * webhook_order_address_known_customer, webhook_order_address_new_address; docs/ucp-conformance-plan.md),
 * following the tag v2026-04-08 where the suite pins 2026-01-11: the body is the order itself
 * (no `{event_type, checkout_id, order}` wrapper), the URL is the platform profile's
 * `dev.ucp.shopping.order[0].config.webhook_url`, and every delivery is checked with Webhook-Id,
 * Webhook-Timestamp, Content-Digest and the RFC 9421 signature against the key the business
 * profile (`UCP-Agent`) publishes, by an independent verifier (verify.ts). The shipment is
 * recorded by the merchant's operator path (recordOrderShipment), not the sample server's
 * /testing/simulate-shipping. Retries and replay are the existing delivery machinery's.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  UCP_ADDRESS,
  ucpCall,
} from '../../../harness/ucp-platform.ts';
import { FileQuoteKeyStore } from '../../../lib/quote-token/key-store.ts';
import { UCP_KEY_RETENTION_MS } from '../../../subgraphs/procurement/webhooks/ucp-signing-key.ts';
import { type Gql, issueKey } from '../../acp/support/acp.ts';
import { type Received, type Receiver, startReceiver, waitFor } from '../../webhooks/support.ts';
import { expectUcp } from '../support/validate.ts';
import { fetchSigningKeys, profileUrlOf, verifyUcpWebhook } from './verify.ts';

export interface UcpEventsSystem extends Gql {
  /** Gateways (consecutive calls alternate). */
  readonly urls: readonly string[];
  /** The DATA_DIR every process of the system shares (its UCP signing key ring is there). */
  readonly dataDir: string;
  close(): Promise<void>;
}

const ITEM = 'SKU-ABC-000001';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHIP =
  'mutation($id: ID!, $t: String!, $c: String, $u: String) { recordOrderShipment(orderId: $id, trackingNumber: $t, carrier: $c, trackingUrl: $u) { orderId shipments { trackingNumber lines { line quantity } } } }';
const ENDPOINTS = '{ webhookEndpoints { endpointId url status } }';
const DELIVERIES =
  'query($id: ID!) { webhookDeliveries(endpointId: $id) { deliveryId eventType status attempts replays lastStatusCode } }';
const REPLAY = 'mutation($id: ID!) { replayWebhookDelivery(deliveryId: $id) { deliveryId status } }';

type Order = {
  id: string;
  checkout_id: string;
  event_id: string;
  created_time: string;
  line_items: { id: string; quantity: { total: number; fulfilled: number }; status: string }[];
  fulfillment: {
    expectations: { destination: Record<string, string>; description?: string }[];
    events: { type: string; tracking_number?: string; carrier?: string; line_items: unknown[] }[];
  };
};

export function ucpWebhookSuite(label: string, start: () => Promise<UcpEventsSystem>): void {
  describe(`UCP order events (${label})`, () => {
    let sys: UcpEventsSystem;
    let profiles: ProfileServer;
    let step = 0;
    let platforms = 0;
    const url = () => sys.urls[step++ % sys.urls.length] as string;

    beforeAll(async () => {
      sys = await start();
      profiles = await startProfileServer();
    }, 240_000);
    afterAll(async () => {
      await profiles?.close();
      await sys?.close();
    });

    /** A platform with its own key and a profile whose order capability names `hook`. */
    async function platform(hook: Receiver) {
      const n = ++platforms;
      const profileUrl = profiles.set(`/platform-${n}.json`, platformProfile({ webhookUrl: hook.url }));
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-events-${label}-${n}`;
      const { key } = await issueKey(sys, {
        spiffeId,
        agentId: `agent-ucp-ev-${label}-${n}-${process.pid}`,
        ucpProfile: profileUrl,
      });
      const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
        ucpCall(url(), { key, profileUrl }, method, path, body);
      /** Create with the address, choose the delivery option, complete on account: the order. */
      const buy = async (address: Record<string, string>, quantity = 2) => {
        const created = await call('POST', '/checkout-sessions', {
          line_items: [{ item: { id: ITEM }, quantity }],
          fulfillment: { methods: [{ type: 'shipping', destinations: [address] }] },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const id = created.body.id as string;
        const updated = await call('PUT', `/checkout-sessions/${id}`, {
          line_items: [{ item: { id: ITEM }, quantity }],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        });
        expect(updated.body.status, JSON.stringify(updated.body)).toBe('ready_for_complete');
        const done = await call('POST', `/checkout-sessions/${id}/complete`, {
          payment: purchaseOrderPayment(`PO-EV-${n}`),
        });
        expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
        return { checkoutId: id, orderId: (done.body.order as { id: string }).id };
      };
      return { call, buy, spiffeId };
    }

    /** Checks one delivery as a platform would, and returns its order. */
    async function verified(d: Received, hook: Receiver): Promise<Order> {
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.headers['webhook-id']).toMatch(UUID);
      // Both conventions' dedupe key, one value (issue 50).
      expect(d.headers['idempotency-key']).toBe(d.headers['webhook-id']);
      expect(d.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
      const profile = profileUrlOf(d.headers);
      // The business profile it names; fetched from the gateway this test reaches (the system
      // runs without PUBLIC_BASE_URL, so the origin in UCP-Agent is its configured HOST:PORT).
      expect(profile).toMatch(/^https?:\/\/[^/]+\/\.well-known\/ucp$/);
      const keys = await fetchSigningKeys(`${url()}/.well-known/ucp`);
      expect(keys.length).toBeGreaterThan(0);
      const verdict = await verifyUcpWebhook({ url: hook.url, headers: d.headers, body: d.body }, keys);
      expect(verdict).toMatchObject({ ok: true });
      // Tampering is noticed: a changed body fails its digest, a changed path its signature.
      const tampered = await verifyUcpWebhook(
        { url: hook.url, headers: d.headers, body: d.body.replace('"checkout_id"', '"checkout_Id"') },
        keys,
      );
      expect(tampered).toEqual({ ok: false, reason: 'digest_mismatch' });
      const elsewhere = await verifyUcpWebhook(
        { url: `${hook.url}/other`, headers: d.headers, body: d.body },
        keys,
      );
      expect(elsewhere.ok).toBe(false);
      const order = JSON.parse(d.body) as Order;
      expectUcp('order', order);
      expect(order.event_id).toBe(d.headers['webhook-id']);
      expect(Number(d.headers['webhook-timestamp'])).toBe(Math.floor(Date.parse(order.created_time) / 1000));
      return order;
    }

    it('webhook_event_stream and order_update: the order on placement, then with its shipment (also on GET), each signed by the profile key', async () => {
      const hook = await startReceiver([200], '/webhooks/ucp/orders');
      try {
        const p = await platform(hook);
        const { checkoutId, orderId } = await p.buy(UCP_ADDRESS);
        await waitFor('the order created event', () => hook.received.length >= 1);
        const placed = await verified(hook.received[0] as Received, hook);
        expect(placed).toMatchObject({ id: orderId, checkout_id: checkoutId });
        expect(placed.line_items.map((l) => [l.status, l.quantity.fulfilled])).toEqual([['processing', 0]]);
        expect(placed.fulfillment.events).toEqual([]);

        // The merchant ships it (operator path, role orders:fulfill; without it: FORBIDDEN).
        const vars = { id: orderId, t: '1ZUCP0001', c: 'UPS', u: 'https://carrier.example/t/1ZUCP0001' };
        const refused = await sys.gql(SHIP, { token: await sys.token(['orders:read']), variables: vars });
        expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
        const shipped = await sys.gql(SHIP, {
          token: await sys.token(['orders:fulfill'], 'ops-ship'),
          variables: vars,
        });
        expect(shipped.errors).toBeUndefined();

        await waitFor('the shipment event', () => hook.received.length >= 2);
        const second = hook.received[1] as Received;
        const update = await verified(second, hook);
        expect(second.headers['webhook-id']).not.toBe(hook.received[0]?.headers['webhook-id']);
        expect(update).toMatchObject({ id: orderId, checkout_id: checkoutId });
        expect(update.fulfillment.events).toMatchObject([
          {
            type: 'shipped',
            tracking_number: '1ZUCP0001',
            carrier: 'UPS',
            line_items: [{ id: 'li_0', quantity: 2 }],
          },
        ]);
        expect(update.line_items.map((l) => l.status)).toEqual(['fulfilled']);
        // GET /orders/{id} is the same current-state snapshot the event carried.
        const read = await p.call('GET', `/orders/${orderId}`);
        expect(read.status).toBe(200);
        expectUcp('order', read.body);
        const { event_id: _e, created_time: _t, ...snapshot } = update;
        expect(read.body).toEqual(snapshot);
        // Recording the same shipment again sends nothing more.
        await sys.gql(SHIP, { token: await sys.token(['orders:fulfill'], 'ops-ship'), variables: vars });
        await new Promise((r) => setTimeout(r, 500));
        expect(hook.received).toHaveLength(2);
      } finally {
        await hook.close();
      }
    });

    it.each([
      [
        'webhook_order_address_known_customer',
        'US',
        {
          first_name: 'John',
          last_name: 'Known',
          street_address: '123 Main St',
          address_locality: 'Austin',
          address_region: 'TX',
          postal_code: '78701',
          address_country: 'US',
        },
      ],
      [
        'webhook_order_address_new_address',
        'CA',
        {
          first_name: 'Jane',
          last_name: 'New',
          street_address: '1 Webhook St',
          address_locality: 'Toronto',
          address_region: 'ON',
          postal_code: 'M5V 2T6',
          address_country: 'CA',
        },
      ],
    ])('%s: the event carries the selected destination (%s)', async (_name, country, address) => {
      const hook = await startReceiver([200], '/webhooks/ucp/orders');
      try {
        const p = await platform(hook);
        await p.buy(address, 1);
        await waitFor('the order created event', () => hook.received.length >= 1);
        const order = await verified(hook.received[0] as Received, hook);
        const [expectation] = order.fulfillment.expectations;
        expect(expectation?.destination).toEqual(address);
        expect(expectation?.destination.address_country).toBe(country);
        expect(expectation?.description).toBe('Delivery under your procurement terms');
      } finally {
        await hook.close();
      }
    });

    it('order_adjustments: an order cancelled by its agent is sent with lines removed and a cancellation adjustment (totals, no amount)', async () => {
      const hook = await startReceiver([200], '/webhooks/ucp/orders');
      try {
        const p = await platform(hook);
        const { orderId } = await p.buy(
          { street_address: '5 Refund Rd', address_locality: 'Austin', address_country: 'US' },
          1,
        );
        await waitFor('the order created event', () => hook.received.length >= 1);
        // The agent withdraws it within the cancel window, through the agent order API (its identity
        // as a trusted proxy states it): there is no platform-side order update at the tag.
        const cancelled = await fetch(`${url()}/api/v2/procurement/orders/${orderId}/cancel`, {
          method: 'POST',
          headers: { 'x-spiffe-id': p.spiffeId },
        });
        expect(cancelled.status).toBe(200);
        await waitFor('the cancellation event', () => hook.received.length >= 2);
        const order = (await verified(hook.received[1] as Received, hook)) as Order & {
          adjustments: { type: string; status: string; totals: { type: string; amount: number }[] }[];
          totals: { type: string; amount: number }[];
        };
        expect(order.line_items.map((l) => [l.quantity.total, l.status])).toEqual([[0, 'removed']]);
        const charged = order.totals.find((t) => t.type === 'total')?.amount as number;
        expect(order.adjustments).toMatchObject([
          { type: 'cancellation', status: 'completed', totals: [{ type: 'total', amount: -charged }] },
        ]);
        expect(order.adjustments[0]).not.toHaveProperty('amount');
        const read = await p.call('GET', `/orders/${orderId}`);
        expect(read.body.adjustments).toEqual(order.adjustments);
      } finally {
        await hook.close();
      }
    });

    it('a key rotated in the shared ring (what npm run ucp-keys rotate does) is published by every running profile and signs the next webhook', async () => {
      const before = (await fetchSigningKeys(`${url()}/.well-known/ucp`)).map(
        (k) => (k as { kid: string }).kid,
      );
      const ring = await FileQuoteKeyStore.open(join(sys.dataDir, 'keys', 'ucp-signing.json'), undefined, {
        retentionMs: UCP_KEY_RETENTION_MS,
      });
      const fresh = await ring.rotate();
      // The profile and the signer look at the shared file at each use: the next read and webhook see it.
      await waitFor(
        'the new key in every gateway profile',
        async () => {
          const published = await Promise.all(
            sys.urls.map(async (u) =>
              (await fetchSigningKeys(`${u}/.well-known/ucp`)).map((k) => (k as { kid: string }).kid),
            ),
          );
          return published.every((kids) => kids.includes(fresh) && before.every((k) => kids.includes(k)));
        },
        5_000,
      );
      const hook = await startReceiver([200], '/webhooks/ucp/orders');
      try {
        const p = await platform(hook);
        await p.buy({ street_address: '7 Rotation Way', address_country: 'US' }, 1);
        await waitFor('the order created event', () => hook.received.length >= 1);
        await verified(hook.received[0] as Received, hook);
        expect(String(hook.received[0]?.headers['signature-input'])).toContain(`keyid="${fresh}"`);
      } finally {
        await hook.close();
      }
    }, 40_000);

    it('retries a failing webhook with the same signed bytes, and an operator replays it', async () => {
      const hook = await startReceiver([500, 200], '/webhooks/ucp/orders');
      try {
        const p = await platform(hook);
        await p.buy({ street_address: '9 Retry Ave', address_locality: 'Austin', address_country: 'US' }, 1);
        await waitFor('a retry after the 500', () => hook.received.length >= 2, 30_000);
        const [first, second] = hook.received as [Received, Received];
        expect(second.body).toBe(first.body);
        expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
        await verified(first, hook);
        await verified(second, hook);

        const admin = await sys.token(['webhooks:admin'], 'ops-hooks');
        const listed = await sys.gql(ENDPOINTS, { token: admin });
        const endpoint = (
          listed.data as { webhookEndpoints: { endpointId: string; url: string; status: string }[] }
        ).webhookEndpoints.find((e) => e.url === hook.url);
        expect(endpoint?.status).toBe('ACTIVE');
        const deliveries = await sys.gql(DELIVERIES, {
          token: admin,
          variables: { id: endpoint?.endpointId },
        });
        const [delivery] = (
          deliveries.data as { webhookDeliveries: { deliveryId: string; status: string }[] }
        ).webhookDeliveries;
        expect(delivery?.status).toBe('DELIVERED');
        const replayed = await sys.gql(REPLAY, { token: admin, variables: { id: delivery?.deliveryId } });
        expect(replayed.errors).toBeUndefined();
        await waitFor('the replay', () => hook.received.length >= 3);
        const third = hook.received[2] as Received;
        expect(third.body).toBe(first.body);
        await verified(third, hook);
      } finally {
        await hook.close();
      }
    });
  });
}
