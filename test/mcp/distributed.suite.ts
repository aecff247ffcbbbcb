/**
 * MCP in the distributed topology: two gateway processes (TOPOLOGY=distributed) on the
 * machine's Redis and a fresh Postgres, the order domain in the procurement process. The
 * server is stateless, so an agent's calls may land on either replica: an order placed through
 * one is read through the other, and contract errors over MCP on both replicas add up to one
 * block that REST sees too.
 *
 * On the layout of test/procurement/distributed.test.ts, with two gateways of its own
 * (`addGateways`): an MCP session's every message takes a rate-limit token (7 and 11 per test
 * here), beyond the six that layout's gateways allow; these have the default limit.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { freshAgent, post, validOrder } from '../procurement/support/agent.ts';
import { problemOf, textOf } from './support.ts';

export function mcpDistributedSuite(topology: () => Promise<DistributedSystem>): void {
  describe('MCP across two gateway replicas', () => {
    let g1: { url: string };
    let g2: { url: string };
    const clients: Client[] = [];

    async function connect(base: string, spiffe: string): Promise<Client> {
      const client = new Client({ name: 'dist-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { 'x-spiffe-id': spiffe } },
        }),
      );
      clients.push(client);
      return client;
    }
    const call = async (c: Client, name: string, args: Record<string, unknown>) =>
      (await c.callTool({ name, arguments: args })) as CallToolResult;

    beforeAll(async () => {
      const [a, b] = await (await topology()).addGateways(2);
      [g1, g2] = [{ url: a as string }, { url: b as string }];
    }, 180_000);

    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => {});
    });

    it('places an order through one replica and reads and lists it through the other', async () => {
      const id = freshAgent('mcp-dist');
      const placed = await call(await connect(g1.url, id), 'place_purchase_order', validOrder());
      expect(placed.isError, textOf(placed)).toBeFalsy();
      const order = placed.structuredContent as { order_id: string };
      const other = await connect(g2.url, id);
      expect((await call(other, 'get_order', { order_id: order.order_id })).structuredContent).toEqual(order);
      const list = (await call(other, 'list_orders', {})).structuredContent as { orders: unknown[] };
      expect(list.orders).toEqual([order]);
    });

    it('adds up contract errors from both replicas into one block, seen by REST', async () => {
      const id = freshAgent('mcp-dist-block');
      const [a, b] = [await connect(g1.url, id), await connect(g2.url, id)];
      const bad = validOrder({ quantity: 0 });
      for (let i = 0; i < 6; i++) {
        const r = await call(i % 2 === 0 ? a : b, 'place_purchase_order', bad);
        expect(problemOf(r).status).toBe(422);
      }
      const blocked = await call(b, 'place_purchase_order', validOrder());
      expect(String(problemOf(blocked).type)).toMatch(/\/agent-blocked$/);
      expect((await post(g1.url, { spiffe: id })).status).toBe(429);
    });
  });
}
