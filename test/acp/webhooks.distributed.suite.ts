import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { migrate } from '../../lib/db/index.ts';
import { type CloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import { createPlatform, type Platform } from '../../lib/platform.ts';
import { checkoutMigrations } from '../../subgraphs/procurement/checkout/migrations.ts';
import { sqlCheckoutSessionStore } from '../../subgraphs/procurement/checkout/sql.ts';
import { type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';
import { expectAcp } from './support/validate.ts';
import { dataOf, sessionOf, verifyMerchantSignature } from './support/webhooks.ts';

/** The public origin the layout's procurement processes are given: they make the permalinks. */
export const ACP_WEBHOOKS_ORIGIN = 'https://shop.example.com';

/**
 * Distributed topology: two procurement processes on one Postgres and one Redis Streams bus,
 * and a gateway the operator calls (the layout of test/procurement/distributed.test.ts, shared
 * with other suites: two procurement replicas, WEBHOOK_ALLOW_PRIVATE_URLS, a short
 * WEBHOOK_RETRY_BASE_MS and WEBHOOK_POLL_INTERVAL_MS, PUBLIC_BASE_URL = ACP_WEBHOOKS_ORIGIN).
 * The checkout session is written to Postgres as the gateway's checkout service writes it, and
 * the order events arrive on the bus as the outbox relays them: every replica routes every
 * event, and the platform gets each exactly once. Its receiver counts only its key's deliveries.
 */
export function acpWebhooksSuite(topology: () => Promise<DistributedSystem>): void {
  describe('ACP order webhooks in the distributed topology', () => {
    let gateway: { url: string };
    let publisher: Platform;
    let hook: Receiver;
    let admin: string;
    const ORIGIN = ACP_WEBHOOKS_ORIGIN;

    beforeAll(async () => {
      const sys = await topology();
      gateway = { url: sys.gateways[0] as string };
      publisher = await createPlatform(testConfig(sys.env), { service: 'procurement-outbox' });
      await migrate(publisher.db, checkoutMigrations);
      admin = await sys.token(['agents:admin', 'webhooks:admin'], 'ops');
      hook = await startReceiver([500, 200]);
    }, 240_000);

    afterAll(async () => {
      await publisher?.close();
      await hook?.close();
    });

    it("delivers each order event of a checkout order once to the key's webhook, with two procurement replicas", async () => {
      const issued = await gql(
        gateway.url,
        `mutation ($input: IssueCheckoutApiKeyInput!) { issueCheckoutApiKey(input: $input) { apiKey { id } } }`,
        {
          token: admin,
          variables: {
            input: {
              name: 'Distributed platform',
              spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/acp-dist',
              agentId: 'agent-acp-dist-01',
              scopes: ['orders:create'],
            },
          },
        },
      );
      expect(issued.errors).toBeUndefined();
      const keyId = (issued.data as { issueCheckoutApiKey: { apiKey: { id: string } } }).issueCheckoutApiKey
        .apiKey.id;
      const set = await gql(
        gateway.url,
        'mutation ($id: ID!, $url: String!) { setCheckoutWebhook(id: $id, url: $url) { signingSecret } }',
        { token: admin, variables: { id: keyId, url: hook.url } },
      );
      expect(set.errors).toBeUndefined();
      const secret = (set.data as { setCheckoutWebhook: { signingSecret: string } }).setCheckoutWebhook
        .signingSecret;

      const session = sessionOf(keyId);
      expect(await sqlCheckoutSessionStore(publisher.db).insert(session)).toBe(true);
      const orderId = session.orderId as string;
      const events: CloudEvent[] = [
        await publisher.bus.publish(
          EventTypes.OrderApprovalRequested,
          dataOf(session, 'PENDING_APPROVAL'),
          orderId,
        ),
        await publisher.bus.publish(EventTypes.OrderApproved, dataOf(session, 'APPROVED'), orderId),
      ];

      const delivered = () => hook.received.filter((r) => r.answered === 200);
      await waitFor('both events delivered', () => delivered().length >= 2, 30_000);
      // Both replicas' workers poll every 100 ms: give a duplicate the time to show up.
      await new Promise((r) => setTimeout(r, 1000));
      expect(delivered()).toHaveLength(2);
      const bodies = delivered().map((r) => {
        expect(verifyMerchantSignature(r.headers['merchant-signature'], r.body, secret)).toBe(true);
        const body = JSON.parse(r.body) as { type: string; data: Record<string, unknown> };
        expectAcp('Order', body.data);
        return body;
      });
      expect(bodies.map((b) => [b.type, b.data.status]).sort()).toEqual([
        ['order_create', 'manual_review'],
        ['order_update', 'confirmed'],
      ]);
      for (const b of bodies)
        expect(b.data).toMatchObject({
          id: orderId,
          checkout_session_id: session.id,
          permalink_url: `${ORIGIN}/acp/checkout_sessions/${session.id}`,
          client_reference_id: session.purchaseOrderNumber,
        });
      const rows = await publisher.db.query<{ event_id: string }>(
        `SELECT d.event_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
       WHERE e.api_key_id = $1`,
        [keyId],
      );
      expect(rows.map((r) => r.event_id).sort()).toEqual(events.map((e) => e.id).sort());
    });
  });
}
