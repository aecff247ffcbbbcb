/**
 * UCP's MCP binding on the distributed topology: two gateway replicas (a checkout created through
 * one is completed through the other), pricing, promotions and procurement in their own
 * processes, Redis and PostgreSQL. The tools run the UCP REST routes in each gateway's process.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../../harness/distributed.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
} from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { expectUcp } from '../support/validate.ts';

/** Runs on the topology `topology` gives (test/ucp/distributed.test.ts shares one), which it does not stop. */
export function ucpMcpSuite(topology: () => Promise<DistributedSystem>): void {
  describe('the UCP MCP binding across two gateway replicas', () => {
    let sys: DistributedSystem;
    let profiles: ProfileServer;
    const clients: Client[] = [];

    beforeAll(async () => {
      sys = await topology();
      profiles = await startProfileServer();
    }, 240_000);
    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => {});
      await profiles?.close();
    });

    it('creates a checkout through one gateway and completes it through the other', async () => {
      const profileUrl = profiles.set('/platform.json', platformProfile());
      const { key } = await issueKey(sys, {
        spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/ucp-mcp-dist',
        agentId: `agent-ucp-mcp-dist-${process.pid}`,
        ucpProfile: profileUrl,
      });
      const [one, two] = await Promise.all(
        sys.gateways.slice(0, 2).map(async (base) => {
          const client = new Client({ name: 'ucp-platform', version: '1.0.0' });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
              requestInit: {
                headers: { authorization: `Bearer ${key}`, 'ucp-agent': `profile="${profileUrl}"` },
              },
            }),
          );
          clients.push(client);
          return client;
        }),
      );
      if (!one || !two) throw new Error('two gateways expected');
      const meta = { 'ucp-agent': { profile: profileUrl } };
      const call = async (c: Client, name: string, args: Record<string, unknown>) => {
        const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
        expect(r.isError).toBeFalsy();
        expectUcp('checkout_with_discount_and_fulfillment', r.structuredContent);
        return r.structuredContent as { id: string; status: string; order?: { id: string } };
      };
      const created = await call(one, 'create_checkout', {
        meta,
        checkout: {
          line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
          fulfillment: {
            methods: [
              { type: 'shipping', destinations: [{ street_address: '1 Dock Rd', address_country: 'US' }] },
            ],
          },
        },
      });
      const ready = await call(two, 'update_checkout', {
        meta,
        id: created.id,
        checkout: {
          line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        },
      });
      expect(ready.status).toBe('ready_for_complete');
      const done = await call(two, 'complete_checkout', {
        meta: { ...meta, 'idempotency-key': randomUUID() },
        id: created.id,
        checkout: {
          payment: purchaseOrderPayment('PO-MCP-DIST'),
        },
      });
      expect(done.status).toBe('completed');
      expect((await call(one, 'get_checkout', { meta, id: created.id })).order?.id).toBe(done.order?.id);
    });
  });
}
