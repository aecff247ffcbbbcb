/**
 * ACP order webhooks end to end on the embedded system, as an operator and a platform see them:
 * the operator issues a checkout API key and sets its webhook (GraphQL), the platform checks
 * out over the ACP routes, and its own HTTP receiver gets `order_create` / `order_update`,
 * checked with a verifier written from the spec (test/acp/support/webhooks.ts), never the
 * sender's code.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { type Behaviour, type Received, type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';
import { acp, expectSession, issueKey, totalOf } from './support/acp.ts';
import { expectAcp } from './support/validate.ts';
import { verifyMerchantSignature } from './support/webhooks.ts';

const SET_WEBHOOK = `mutation ($id: ID!, $url: String!) {
  setCheckoutWebhook(id: $id, url: $url) { signingSecret apiKey { id webhook { url secretSet } } }
}`;
const SET_POLICY = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';
const APPROVE = 'mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { orderId status } }';
const REJECT =
  'mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) { orderId status } }';
const ENDPOINTS = '{ webhookEndpoints { endpointId url description status } }';
const DELIVERIES = `query ($id: ID!) {
  webhookDeliveries(endpointId: $id) { deliveryId eventType status attempts replays lastStatusCode }
}`;
const REPLAY = 'mutation ($id: ID!) { replayWebhookDelivery(deliveryId: $id) { deliveryId status } }';
const REGISTER = `mutation ($url: String!, $types: [String!]!) {
  registerWebhookEndpoint(url: $url, eventTypes: $types) { signingSecret endpoint { endpointId } }
}`;

interface AcpEvent {
  type: 'order_create' | 'order_update';
  data: {
    type: string;
    id: string;
    checkout_session_id: string;
    permalink_url: string;
    client_reference_id?: string;
    status: string;
    line_items: {
      id: string;
      title: string;
      quantity: { ordered: number; current: number };
      unit_price: number;
      subtotal: number;
    }[];
    totals: { type: string; amount: number }[];
  };
}

let sys: TestSystem;
const receivers: Receiver[] = [];

beforeAll(async () => {
  sys = await startEmbedded({
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_MAX_ATTEMPTS: '4',
    WEBHOOK_RETRY_BASE_MS: '20',
    WEBHOOK_RETRY_MAX_DELAY_MS: '80',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_INTERVAL_MS: '100',
  });
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(() => sys?.close());

let n = 0;

/**
 * A platform of its own (its own identity, so its own spend policy), its checkout API key, and
 * its webhook receiver registered by the operator with setCheckoutWebhook.
 */
async function platform(o: { policy?: Record<string, string>; script?: Behaviour[] } = {}) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/acp-hook-${++n}`;
  if (o.policy) {
    const r = await sys.gql(SET_POLICY, {
      token: await sys.token(['spend:admin']),
      variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...o.policy } },
    });
    expect(r.errors).toBeUndefined();
  }
  const { key, id } = await issueKey(sys, {
    spiffeId,
    agentId: `agent-acp-hook-${String(n).padStart(3, '0')}`,
  });
  const receiver = await startReceiver(o.script ?? [200], '/acp/order_events');
  receivers.push(receiver);
  const set = await sys.gql(SET_WEBHOOK, {
    token: await sys.token(['agents:admin'], 'ops-acp'),
    variables: { id, url: receiver.url },
  });
  expect(set.errors).toBeUndefined();
  const secret = (set.data as { setCheckoutWebhook: { signingSecret: string } }).setCheckoutWebhook
    .signingSecret;
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    acp(sys.url, key, method, path, body);
  const open = async (
    lineItems: { id: string; quantity: number }[] = [{ id: 'SKU-ABC-000001', quantity: 2 }],
  ) =>
    expectSession(
      await call('POST', '/checkout_sessions', { currency: 'usd', capabilities: {}, line_items: lineItems }),
      201,
    );
  const complete = async (sessionId: unknown, po = `PO-${sessionId}`) =>
    expectSession(
      await call('POST', `/checkout_sessions/${sessionId}/complete`, {
        payment_data: { purchase_order_number: po },
      }),
    );
  /** The ACP events received for an order, in arrival order, each checked and parsed. */
  const eventsOf = (orderId: string): { r: Received; body: AcpEvent }[] =>
    receiver.received
      .map((r) => ({ r, body: JSON.parse(r.body) as AcpEvent }))
      .filter((x) => x.body.data?.id === orderId);
  const waitEvents = (orderId: string, count: number) =>
    waitFor(`${count} event(s) of ${orderId}`, () => {
      const got = eventsOf(orderId).filter((x) => x.r.answered === 200);
      return got.length >= count ? got : undefined;
    });
  return { id, spiffeId, secret, receiver, call, open, complete, eventsOf, waitEvents };
}

/** A delivery as a platform checks it: the signature (spec's verifier), JSON, a valid ACP Order. */
function expectSigned(r: Received, secret: string): AcpEvent {
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['merchant-signature']).toMatch(/^t=\d+,v1=[a-f0-9]{64}$/);
  expect(verifyMerchantSignature(r.headers['merchant-signature'], r.body, secret)).toBe(true);
  const body = JSON.parse(r.body) as AcpEvent;
  expect(Object.keys(body).sort()).toEqual(['data', 'type']);
  expect(body.data.type).toBe('order');
  expectAcp('Order', body.data);
  return body;
}

async function acpEndpointOf(url: string): Promise<{ endpointId: string; description: string }> {
  const res = await sys.gql(ENDPOINTS, { token: await sys.token(['webhooks:admin']) });
  expect(res.errors).toBeUndefined();
  const endpoints = (res.data?.webhookEndpoints ?? []) as {
    endpointId: string;
    url: string;
    description: string;
  }[];
  const found = endpoints.find((e) => e.url === url);
  if (!found) throw new Error(`no endpoint for ${url}`);
  return found;
}

async function deliveriesOf(endpointId: string) {
  const res = await sys.gql(DELIVERIES, {
    token: await sys.token(['webhooks:admin']),
    variables: { id: endpointId },
  });
  expect(res.errors).toBeUndefined();
  return res.data?.webhookDeliveries as {
    deliveryId: string;
    eventType: string;
    status: string;
    attempts: number;
    replays: number;
  }[];
}

describe('ACP order webhooks (embedded, real HTTP receiver)', () => {
  it("sends order_create to the key's webhook when a session completes: signed, a valid Order, the session's totals", async () => {
    const p = await platform();
    const s = await p.open([
      { id: 'SKU-ABC-000001', quantity: 2 },
      { id: 'SKU-ELC-000004', quantity: 3 },
    ]);
    const done = await p.complete(s.id, 'PO-2026-0001');
    expect(done.status).toBe('completed');
    const order = done.order as { id: string; permalink_url: string };

    const [got] = await p.waitEvents(order.id, 1);
    const body = expectSigned(got?.r as Received, p.secret);
    expect(body.type).toBe('order_create');
    expect(body.data).toMatchObject({
      id: order.id,
      checkout_session_id: s.id,
      permalink_url: order.permalink_url,
      client_reference_id: 'PO-2026-0001',
      status: 'confirmed',
    });
    expect(got?.r.headers['request-id']).toBeTruthy();
    // The session's lines and totals, in cents.
    const lines = done.line_items as {
      id: string;
      name: string;
      quantity: number;
      unit_amount: number;
      totals: { type: string; amount: number }[];
    }[];
    expect(
      body.data.line_items.map((l) => [l.id, l.title, l.quantity.ordered, l.unit_price, l.subtotal]),
    ).toEqual(
      lines.map((l) => [
        l.id,
        l.name,
        l.quantity,
        l.unit_amount,
        l.totals.find((t) => t.type === 'total')?.amount,
      ]),
    );
    for (const type of ['items_base_amount', 'items_discount', 'subtotal', 'total'])
      expect(body.data.totals.find((t) => t.type === type)?.amount, type).toBe(totalOf(done, type));

    // The operator sees the platform's endpoint and its delivery.
    const endpoint = await acpEndpointOf(p.receiver.url);
    expect(endpoint.description).toBe(`ACP order webhooks of checkout API key ${p.id}`);
    expect(await deliveriesOf(endpoint.endpointId)).toEqual([
      expect.objectContaining({ eventType: EventTypes.OrderPlaced, status: 'DELIVERED', attempts: 1 }),
    ]);
  });

  it('sends order_create with manual_review for a session held for approval, then order_update confirmed once approved', async () => {
    const p = await platform({ policy: { budget: '100000.00', approvalAbove: '0.01' } });
    const s = await p.open();
    const pending = await p.complete(s.id);
    expect(pending.status).toBe('pending_approval');
    const orderId = (pending.order as { id: string }).id;
    const [created] = await p.waitEvents(orderId, 1);
    expect(expectSigned(created?.r as Received, p.secret)).toMatchObject({
      type: 'order_create',
      data: { status: 'manual_review', checkout_session_id: s.id },
    });

    const approved = await sys.gql(APPROVE, {
      token: await sys.token(['orders:approve'], 'alice'),
      variables: { id: orderId },
    });
    expect(approved.errors).toBeUndefined();
    const [, update] = await p.waitEvents(orderId, 2);
    const body = expectSigned(update?.r as Received, p.secret);
    expect(body).toMatchObject({ type: 'order_update', data: { status: 'confirmed', id: orderId } });
    expect(body.data.totals.find((t) => t.type === 'total')?.amount).toBe(totalOf(pending));
  });

  it("follows a key rotation: the order_update of an order placed under the revoked key goes to the new key's webhook", async () => {
    const p = await platform({ policy: { budget: '100000.00', approvalAbove: '0.01' } });
    const s = await p.open();
    const orderId = ((await p.complete(s.id)).order as { id: string }).id;
    await p.waitEvents(orderId, 1);
    // The platform rotates: a new key for the same identity and name, its own receiver; the old key is revoked.
    const admin = await sys.token(['agents:admin'], 'ops-acp');
    const next = await issueKey(sys, { spiffeId: p.spiffeId, agentId: 'agent-acp-rotated' });
    const receiver = await startReceiver([200], '/acp/order_events');
    receivers.push(receiver);
    const set = await sys.gql(SET_WEBHOOK, { token: admin, variables: { id: next.id, url: receiver.url } });
    expect(set.errors).toBeUndefined();
    const secret = (set.data as { setCheckoutWebhook: { signingSecret: string } }).setCheckoutWebhook
      .signingSecret;
    const revoked = await sys.gql('mutation ($id: ID!) { revokeCheckoutApiKey(id: $id) { id } }', {
      token: admin,
      variables: { id: p.id },
    });
    expect(revoked.errors).toBeUndefined();
    const approved = await sys.gql(APPROVE, {
      token: await sys.token(['orders:approve'], 'alice'),
      variables: { id: orderId },
    });
    expect(approved.errors).toBeUndefined();
    const got = await waitFor('the update at the new webhook', () =>
      receiver.received.find(
        (r) => r.answered === 200 && (JSON.parse(r.body) as AcpEvent).data.id === orderId,
      ),
    );
    expect(expectSigned(got, secret)).toMatchObject({
      type: 'order_update',
      data: { status: 'confirmed', id: orderId },
    });
  });

  it('sends order_update canceled when an operator rejects the order of a held session', async () => {
    const p = await platform({ policy: { budget: '100000.00', approvalAbove: '0.01' } });
    const s = await p.open();
    const orderId = ((await p.complete(s.id)).order as { id: string }).id;
    await p.waitEvents(orderId, 1);
    const rejected = await sys.gql(REJECT, {
      token: await sys.token(['orders:approve'], 'bob'),
      variables: { id: orderId, reason: 'not this quarter' },
    });
    expect(rejected.errors).toBeUndefined();
    const [, update] = await p.waitEvents(orderId, 2);
    const body = expectSigned(update?.r as Received, p.secret);
    expect(body).toMatchObject({ type: 'order_update', data: { status: 'canceled' } });
    for (const l of body.data.line_items) expect(l.quantity.current).toBe(0);
    expect(expectSession(await p.call('GET', `/checkout_sessions/${s.id}`)).status).toBe('canceled');
  });

  it('retries a receiver that fails, with a fresh signature on the same bytes; a tampered delivery fails the verifier; a replay sends it again', async () => {
    const p = await platform({ script: [500, 200] });
    const s = await p.open();
    const orderId = ((await p.complete(s.id)).order as { id: string }).id;
    await p.waitEvents(orderId, 1);
    const attempts = p.eventsOf(orderId);
    expect(attempts.map((a) => a.r.answered)).toEqual([500, 200]);
    expect(attempts[0]?.r.body).toBe(attempts[1]?.r.body);
    expect(attempts[0]?.r.headers['request-id']).toBe(attempts[1]?.r.headers['request-id']);
    for (const a of attempts) expectSigned(a.r, p.secret);

    const last = attempts[1]?.r as Received;
    const header = String(last.headers['merchant-signature']);
    expect(verifyMerchantSignature(header, last.body.replace('"confirmed"', '"canceled"'), p.secret)).toBe(
      false,
    );
    expect(
      verifyMerchantSignature(
        header.replace(/[0-9a-f]$/, (c) => (c === 'a' ? 'b' : 'a')),
        last.body,
        p.secret,
      ),
    ).toBe(false);

    const endpoint = await acpEndpointOf(p.receiver.url);
    const [delivery] = await deliveriesOf(endpoint.endpointId);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    const replay = await sys.gql(REPLAY, {
      token: await sys.token(['webhooks:admin']),
      variables: { id: delivery?.deliveryId },
    });
    expect(replay.errors).toBeUndefined();
    const again = await p.waitEvents(orderId, 2);
    expect(again[1]?.r.body).toBe(last.body);
    expectSigned(again[1]?.r as Received, p.secret);
  });

  it("never sends one platform's orders to another; operators' Standard Webhooks endpoints still get theirs", async () => {
    const a = await platform();
    const b = await platform();
    const erp = await startReceiver([200]);
    receivers.push(erp);
    const reg = await sys.gql(REGISTER, {
      token: await sys.token(['webhooks:admin']),
      variables: { url: erp.url, types: [EventTypes.OrderPlaced] },
    });
    expect(reg.errors).toBeUndefined();
    const erpSecret = (reg.data as { registerWebhookEndpoint: { signingSecret: string } })
      .registerWebhookEndpoint.signingSecret;

    const orderA = ((await a.complete((await a.open()).id)).order as { id: string }).id;
    const orderB = ((await b.complete((await b.open()).id)).order as { id: string }).id;
    await a.waitEvents(orderA, 1);
    await b.waitEvents(orderB, 1);
    const erpGot = await waitFor('both orders at the operator endpoint', () => {
      const subjects = erp.received.map((r) => (JSON.parse(r.body) as { subject: string }).subject);
      return subjects.includes(orderA) && subjects.includes(orderB) ? erp.received : undefined;
    });
    expect(a.eventsOf(orderB)).toEqual([]);
    expect(b.eventsOf(orderA)).toEqual([]);
    expect(a.receiver.received).toHaveLength(1);
    expect(b.receiver.received).toHaveLength(1);
    // The operator's deliveries are the CloudEvents, Standard Webhooks signed, as before.
    for (const r of erpGot) {
      expect(r.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
      expect(r.headers['merchant-signature']).toBeUndefined();
      const event = new Webhook(erpSecret).verify(r.body, r.headers as Record<string, string>) as {
        type: string;
        data: { checkout_session_id?: string };
      };
      expect(event.type).toBe(EventTypes.OrderPlaced);
      expect(event.data.checkout_session_id).toMatch(/^cs_/);
    }
  });
});
