import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { type Behaviour, orderData, type Receiver, startReceiver, waitFor } from './support.ts';

const REGISTER = `mutation ($url: String!, $types: [String!]!, $description: String) {
  registerWebhookEndpoint(url: $url, eventTypes: $types, description: $description) {
    signingSecret endpoint { endpointId url eventTypes description status createdAt }
  }
}`;
const DELIVERIES = `query ($endpointId: ID!, $status: WebhookDeliveryStatus) {
  webhookDeliveries(endpointId: $endpointId, status: $status) {
    deliveryId eventId eventType status attempts replays lastStatusCode lastError deliveredAt nextAttemptAt
  }
}`;
const REPLAY = `mutation ($id: ID!) { replayWebhookDelivery(deliveryId: $id) { deliveryId status attempts replays } }`;
const ENDPOINTS = '{ webhookEndpoints { endpointId url status disabledReason } }';

interface Delivery {
  deliveryId: string;
  eventId: string;
  eventType: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  replays: number;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
}

const MAX_ATTEMPTS = 4;
let sys: TestSystem;
let token: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  sys = await startEmbedded({
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    WEBHOOK_RETRY_BASE_MS: '20',
    WEBHOOK_RETRY_MAX_DELAY_MS: '80',
    // Long enough that a receiver's prompt answer is never taken for a timeout while the suite
    // loads the machine (400 ms was not: an attempt at the 503 receiver timed out, leaving
    // lastStatusCode null), short enough that the 'hang' receivers cost little.
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_INTERVAL_MS: '100',
  });
  token = await sys.token(['webhooks:admin']);
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(() => sys?.close());

async function receiver(...script: Behaviour[]) {
  const r = await startReceiver(script);
  receivers.push(r);
  return r;
}

async function register(url: string, types: string[] = [EventTypes.OrderPlaced, EventTypes.OrderCancelled]) {
  const res = await sys.gql(REGISTER, { token, variables: { url, types, description: 'test receiver' } });
  expect(res.errors).toBeUndefined();
  return (
    res.data as { registerWebhookEndpoint: { signingSecret: string; endpoint: { endpointId: string } } }
  ).registerWebhookEndpoint;
}

async function deliveries(endpointId: string, status?: string): Promise<Delivery[]> {
  const res = await sys.gql(DELIVERIES, { token, variables: { endpointId, ...(status ? { status } : {}) } });
  expect(res.errors).toBeUndefined();
  return (res.data as { webhookDeliveries: Delivery[] }).webhookDeliveries;
}

const settled = (endpointId: string, status: Delivery['status']) =>
  waitFor(`a ${status} delivery`, async () =>
    (await deliveries(endpointId)).find((d) => d.status === status),
  );

let seq = 0;
const publishOrderPlaced = () => {
  const data = orderData(++seq);
  return sys.platform.bus.publish(EventTypes.OrderPlaced, data, data.order_id);
};

describe('webhook deliveries (embedded, real HTTP receiver)', () => {
  it('retries a receiver that fails (500, then a timeout) until it recovers; every attempt is signed and carries the event id', async () => {
    const hook = await receiver(500, 'hang', 200);
    const { signingSecret, endpoint } = await register(hook.url);
    expect(signingSecret).toMatch(/^whsec_/);
    const event = await publishOrderPlaced();

    const delivered = await settled(endpoint.endpointId, 'DELIVERED');
    expect(delivered).toMatchObject({ eventId: event.id, attempts: 3, lastStatusCode: 200, lastError: null });
    expect(hook.received.map((r) => r.answered)).toEqual([500, 'hang', 200]);
    const metric = await sys.platform.metrics.getSingleMetric('webhook_attempts_total')?.get();
    const count = (outcome: string) => metric?.values.find((v) => v.labels.outcome === outcome)?.value;
    expect([count('retry'), count('delivered')]).toEqual([2, 1]);
    for (const r of hook.received) {
      expect(r.headers['webhook-id']).toBe(event.id);
      expect(r.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
      // The verifier checks the signature and that the timestamp is recent; it returns the payload.
      expect(new Webhook(signingSecret).verify(r.body, r.headers as Record<string, string>)).toEqual(
        JSON.parse(JSON.stringify(event)),
      );
    }
    expect(() =>
      new Webhook(signingSecret).verify(
        hook.received[2]?.body.replace('1234.50', '1.00') ?? '',
        hook.received[2]?.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('stops at the attempt limit, marks the delivery failed, and a replay delivers it again with the same webhook-id', async () => {
    const hook = await receiver(503);
    const { signingSecret, endpoint } = await register(hook.url);
    const event = await publishOrderPlaced();

    const failed = await settled(endpoint.endpointId, 'FAILED');
    expect(failed).toMatchObject({ attempts: MAX_ATTEMPTS, lastStatusCode: 503 });
    expect(failed.lastError).toMatch(`attempt ${MAX_ATTEMPTS} of ${MAX_ATTEMPTS}`);
    const ofEvent = () => hook.received.filter((r) => r.headers['webhook-id'] === event.id);
    expect(ofEvent()).toHaveLength(MAX_ATTEMPTS);
    // Nothing more is sent for it: later worker rounds (for a delivery to another endpoint) leave it alone.
    const other = await receiver(200);
    const second = await register(other.url);
    const next = await publishOrderPlaced();
    await waitFor('the next event delivered', async () =>
      (await deliveries(second.endpoint.endpointId, 'DELIVERED')).find((d) => d.eventId === next.id),
    );
    expect(ofEvent()).toHaveLength(MAX_ATTEMPTS);

    hook.script(200);
    const replay = await sys.gql(REPLAY, { token, variables: { id: failed.deliveryId } });
    expect(replay.errors).toBeUndefined();
    expect(replay.data).toEqual({
      replayWebhookDelivery: { deliveryId: failed.deliveryId, status: 'PENDING', attempts: 0, replays: 1 },
    });
    const delivered = await waitFor('the replayed delivery delivered', async () =>
      (await deliveries(endpoint.endpointId, 'DELIVERED')).find((d) => d.deliveryId === failed.deliveryId),
    );
    expect(delivered).toMatchObject({ eventId: event.id, attempts: 1, replays: 1, lastStatusCode: 200 });
    expect(ofEvent()).toHaveLength(MAX_ATTEMPTS + 1);
    const last = ofEvent().at(-1);
    expect(
      new Webhook(signingSecret).verify(last?.body ?? '', last?.headers as Record<string, string>),
    ).toMatchObject({
      id: event.id,
    });
  });

  it('refuses to replay a delivery that is still pending (it is being attempted)', async () => {
    const hook = await receiver('hang');
    const { endpoint } = await register(hook.url);
    await publishOrderPlaced();
    await waitFor('the first attempt', () => hook.received.length > 0);
    const [pending] = await deliveries(endpoint.endpointId);
    expect(pending?.status).toBe('PENDING');
    const replay = await sys.gql(REPLAY, { token, variables: { id: pending?.deliveryId } });
    expect(replay.status).toBeLessThan(500);
    expect(replay.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(replay.errors?.[0]?.message).toMatch(/still pending/);
  });

  it('signs with the new and the old secret after a rotation (grace period)', async () => {
    const hook = await receiver(200);
    const { signingSecret: old, endpoint } = await register(hook.url);
    const rotated = await sys.gql(
      'mutation ($id: ID!) { rotateWebhookSecret(endpointId: $id) { signingSecret } }',
      { token, variables: { id: endpoint.endpointId } },
    );
    const fresh = (rotated.data as { rotateWebhookSecret: { signingSecret: string } }).rotateWebhookSecret
      .signingSecret;
    const event = await publishOrderPlaced();
    await waitFor('the delivery', async () =>
      (await deliveries(endpoint.endpointId, 'DELIVERED')).find((d) => d.eventId === event.id),
    );
    const got = hook.received.find((r) => r.headers['webhook-id'] === event.id);
    const headers = got?.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of [fresh, old])
      expect(new Webhook(secret).verify(got?.body ?? '', headers)).toMatchObject({ id: event.id });
  });

  it('delivers only the event types an endpoint subscribed to', async () => {
    const hook = await receiver(200);
    const { endpoint } = await register(hook.url, [EventTypes.OrderCancelled]);
    await publishOrderPlaced();
    const data = orderData(++seq);
    const cancelled = await sys.platform.bus.publish(
      EventTypes.OrderCancelled,
      { ...data, status: 'CANCELLED' },
      data.order_id,
    );
    const d = await settled(endpoint.endpointId, 'DELIVERED');
    expect(d).toMatchObject({ eventId: cancelled.id, eventType: EventTypes.OrderCancelled });
    expect(await deliveries(endpoint.endpointId)).toHaveLength(1);
    // Only the subscribed event reached the receiver. Delivery is at least once: an attempt whose
    // answer came after WEBHOOK_TIMEOUT_MS (2 s here, on a loaded machine) is sent again.
    expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([cancelled.id]));
  });

  it('disables an endpoint whose receiver answers 410 Gone, and sends it nothing more', async () => {
    const hook = await receiver(410);
    const { endpoint } = await register(hook.url);
    await publishOrderPlaced();
    const d = await settled(endpoint.endpointId, 'FAILED');
    expect(d).toMatchObject({ attempts: 1, lastStatusCode: 410 });
    const list = (await sys.gql(ENDPOINTS, { token })).data as {
      webhookEndpoints: { endpointId: string; status: string; disabledReason: string }[];
    };
    expect(list.webhookEndpoints.find((e) => e.endpointId === endpoint.endpointId)).toMatchObject({
      status: 'DISABLED',
      disabledReason: 'the receiver answered 410 Gone',
    });
    await publishOrderPlaced();
    // A disabled endpoint gets no new delivery rows.
    const other = await receiver(200);
    const second = await register(other.url);
    await publishOrderPlaced();
    await settled(second.endpoint.endpointId, 'DELIVERED');
    expect(await deliveries(endpoint.endpointId)).toHaveLength(1);
    const replay = await sys.gql(REPLAY, { token, variables: { id: d.deliveryId } });
    expect(replay.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(hook.received).toHaveLength(1);
  });
});
