import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { orderData, type Receiver, startReceiver, waitFor } from './support.ts';

/**
 * Distributed topology: a procurement process and a gateway process. The operator registers
 * over the gateway (GraphQL over HTTP to the subgraph); the event arrives on Redis Streams.
 */
describe('webhooks in the distributed topology', () => {
  const procs: ServiceProcess[] = [];
  let gateway: ServiceProcess;
  let publisher: Platform;
  let hook: Receiver;
  let token: string;
  let dropPg = async () => {};

  beforeAll(async () => {
    const pg = await freshPostgres('webhooks_dist');
    dropPg = pg.drop;
    const env = {
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('webhooks-dist'),
      GATEWAY_SHARED_SECRET: 'webhooks-distributed-secret-0123456789',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-webhooks-')),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_BASE_MS: '50',
    };
    const procurement = await startProcess('procurement', env, 90_000);
    procs.push(procurement);
    gateway = await startProcess(
      'gateway',
      { ...env, TOPOLOGY: 'distributed', PROCUREMENT_URL: procurement.url },
      90_000,
    );
    procs.push(gateway);
    const config = testConfig(env);
    publisher = await createPlatform(config, { service: 'procurement-outbox' });
    token = await mintDevToken(config, { subject: 'ops', roles: ['webhooks:admin'] });
    hook = await startReceiver([500, 200]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await publisher?.close();
    await hook?.close();
    await dropPg();
  });

  it('answers a bad registration through the gateway with BAD_USER_INPUT, not a 5xx', async () => {
    const res = await gql(
      gateway.url,
      'mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventTypes: ["x"]) { signingSecret } }',
      { token, variables: { url: 'ftp://hooks.example.com/' } },
    );
    expect(res.status).toBeLessThan(500);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'url' });
  });

  it('registers through the gateway and delivers an event from the bus, signed, after a retry', async () => {
    const res = await gql(
      gateway.url,
      `mutation ($url: String!) {
        registerWebhookEndpoint(url: $url, eventTypes: ["${EventTypes.OrderPlaced}"]) {
          signingSecret endpoint { endpointId }
        }
      }`,
      { token, variables: { url: hook.url } },
    );
    expect(res.errors).toBeUndefined();
    const { signingSecret, endpoint } = (
      res.data as { registerWebhookEndpoint: { signingSecret: string; endpoint: { endpointId: string } } }
    ).registerWebhookEndpoint;

    const data = orderData(77);
    const event = await publisher.bus.publish(EventTypes.OrderPlaced, data, data.order_id);
    const delivered = await waitFor('the delivery', async () => {
      const list = await gql(
        gateway.url,
        'query ($id: ID!) { webhookDeliveries(endpointId: $id, status: DELIVERED) { eventId attempts } }',
        { token, variables: { id: endpoint.endpointId } },
      );
      return (list.data?.webhookDeliveries as { eventId: string; attempts: number }[] | undefined)?.[0];
    });
    expect(delivered).toEqual({ eventId: event.id, attempts: 2 });
    expect(hook.received.map((r) => [r.answered, r.headers['webhook-id']])).toEqual([
      [500, event.id],
      [200, event.id],
    ]);
    const last = hook.received[1];
    expect(
      new Webhook(signingSecret).verify(last?.body ?? '', last?.headers as Record<string, string>),
    ).toMatchObject({
      subject: data.order_id,
      data,
    });
  });
});
