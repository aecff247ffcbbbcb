import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { testConfig } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { createWebhooks, type Webhooks } from '../../subgraphs/procurement/webhooks/index.ts';
import { orderData, type Receiver, startReceiver, waitFor } from './support.ts';

/**
 * Two procurement replicas on one real Postgres and one Redis Streams bus: every replica gets
 * every event (fan-out) and runs its own delivery worker against the shared table.
 */
describe('webhook deliveries with two replicas (Postgres + Redis Streams)', () => {
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  const platforms: Platform[] = [];
  const replicas: Webhooks[] = [];
  let hook: Receiver;

  beforeAll(async () => {
    pg = await freshPostgres('webhooks');
    hook = await startReceiver([200]);
    const config = testConfig({
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('webhooks'),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // Small batches, so both workers claim from the same due rows many times over.
      WEBHOOK_BATCH_SIZE: '3',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    for (const name of ['procurement-a', 'procurement-b']) {
      const platform = await createPlatform(config, { service: name });
      platforms.push(platform);
      replicas.push(await createWebhooks(platform));
    }
  });
  afterAll(async () => {
    for (const r of replicas) await r.close();
    for (const p of platforms) await p.close();
    await hook?.close();
    await pg?.drop();
  });

  it('creates one delivery per event and endpoint, and delivers each exactly once, never twice at the same time', async () => {
    const [a, b] = replicas as [Webhooks, Webhooks];
    const { endpoint, signingSecret } = await a.admin.register({
      url: hook.url,
      eventTypes: [EventTypes.OrderPlaced],
    });
    const publisher = platforms[0] as Platform;
    const events = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const data = orderData(1000 + i);
        return publisher.bus.publish(EventTypes.OrderPlaced, data, data.order_id);
      }),
    );
    // Both workers, besides their own loops, race claim rounds against each other.
    const race = async () => {
      for (let i = 0; i < 20; i++) await Promise.all([a.worker.runOnce(), b.worker.runOnce()]);
    };
    await race();
    const delivered = await waitFor('all 40 delivered', async () => {
      const rows = await a.admin.deliveries({
        endpointId: endpoint.endpointId,
        status: 'delivered',
        limit: 200,
      });
      return rows.length === events.length ? rows : undefined;
    });

    expect(new Set(delivered.map((d) => d.eventId))).toEqual(new Set(events.map((e) => e.id)));
    expect(delivered.every((d) => d.attempts === 1)).toBe(true);
    // The receiver got each event once, and never two requests of one event at a time.
    const ids = hook.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(events.length);
    expect(new Set(ids).size).toBe(events.length);
    expect(hook.maxConcurrentPerId()).toBe(1);
    for (const r of hook.received.slice(0, 5))
      expect(new Webhook(signingSecret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({
        type: EventTypes.OrderPlaced,
      });
    // Both replicas saw every event: both inserted, one insert per (endpoint, event) counted.
    const [{ n }] = (await publisher.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_deliveries',
    )) as [{ n: string }];
    expect(Number(n)).toBe(events.length);
  });

  it('hands a claimed delivery to no other worker while its attempt runs (the lease)', async () => {
    const [a, b] = replicas as [Webhooks, Webhooks];
    // The workers stop; the test claims as they would, so it can hold a claim open.
    await a.worker.close();
    await b.worker.close();
    const now = new Date();
    const { endpoint } = await a.admin.register({ url: hook.url, eventTypes: [EventTypes.OrderCancelled] });
    const data = orderData(5000);
    const event = await platforms[0]?.bus.publish(EventTypes.OrderCancelled, data, data.order_id);
    // Claim straight from the store, as a worker does, without sending: the delivery is now held.
    const claimed = await waitFor('the delivery row', async () => {
      const c = await a.store.claimDue(new Date(Date.now() + 1000), new Date(Date.now() + 60_000), 10);
      return c.find((d) => d.eventId === event?.id);
    });
    expect(claimed.endpointId).toBe(endpoint.endpointId);
    expect(await b.store.claimDue(new Date(Date.now() + 1000), new Date(), 10)).toEqual([]);
    // An outcome from a stale claim (one taken over after its lease) is not recorded.
    const retaken = await b.store.claimDue(
      new Date(Date.now() + 120_000),
      new Date(Date.now() + 180_000),
      10,
    );
    expect(retaken.map((d) => d.deliveryId)).toEqual([claimed.deliveryId]);
    await a.store.record(claimed, { kind: 'delivered', statusCode: 200 }, now);
    const [row] = await a.admin.deliveries({ endpointId: endpoint.endpointId, limit: 1 });
    expect(row).toMatchObject({ status: 'pending', attempts: 2 });
    await b.store.record(retaken[0] as (typeof retaken)[0], { kind: 'delivered', statusCode: 204 }, now);
    const [after] = await a.admin.deliveries({ endpointId: endpoint.endpointId, limit: 1 });
    expect(after).toMatchObject({ status: 'delivered', lastStatusCode: 204 });
  });
});
