import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { orderData, type Receiver, startReceiver, waitFor } from './support.ts';

/**
 * Distributed topology: procurement and a gateway in their own processes (the layout of
 * test/procurement/distributed.test.ts, shared with other suites, needing
 * WEBHOOK_ALLOW_PRIVATE_URLS and a short WEBHOOK_RETRY_BASE_MS). The operator registers over the
 * gateway (GraphQL over HTTP to the subgraph); the event arrives on Redis Streams.
 *
 * The endpoint takes every order placed: the suite runs before any other suite places one, and
 * disables it after, so the orders of the suites after it are not sent to a closed receiver.
 */
export function webhooksDistributedSuite(topology: () => Promise<DistributedSystem>): void {
  describe('webhooks in the distributed topology', () => {
    let gateway: { url: string };
    let publisher: Platform;
    let hook: Receiver;
    let token: string;
    let registered: string | undefined;

    beforeAll(async () => {
      const sys = await topology();
      gateway = { url: sys.gateways[0] as string };
      publisher = await createPlatform(testConfig(sys.env), { service: 'procurement-outbox' });
      token = await sys.token(['webhooks:admin'], 'ops');
      hook = await startReceiver([500, 200]);
    }, 240_000);

    afterAll(async () => {
      if (registered)
        await gql(gateway.url, 'mutation ($id: ID!) { disableWebhookEndpoint(endpointId: $id) { status } }', {
          token,
          variables: { id: registered },
        });
      await publisher?.close();
      await hook?.close();
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
      registered = endpoint.endpointId;

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
}
