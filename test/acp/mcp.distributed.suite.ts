/**
 * The ACP tools on the distributed topology: two gateway replicas on Redis and Postgres, the
 * subgraphs in their own processes. /mcp is stateless and the checkout API key is verified by
 * each replica, so a platform's consecutive tool calls may land on either: a session created
 * through one is updated, completed and read through the other, and a repeated create with the
 * same meta.idempotency_key on the other replica replays the first.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { AGENT } from '../procurement/support/agent.ts';
import { API_VERSION, issueKey } from './support/acp.ts';
import { expectAcp } from './support/validate.ts';

/** Runs on the topology `topology` gives (test/acp/distributed.test.ts shares one), which it does not stop. */
export function acpMcpSuite(topology: () => Promise<DistributedSystem>): void {
  let sys: DistributedSystem;
  const clients: Client[] = [];

  async function connect(base: string, key: string): Promise<Client> {
    const client = new Client({ name: 'acp-platform', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    await client.listTools();
    clients.push(client);
    return client;
  }

  const session = async (c: Client, name: string, args: Record<string, unknown>) => {
    const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
    const s = r.structuredContent as Record<string, unknown>;
    expectAcp(s.order ? 'CheckoutSessionWithOrder' : 'CheckoutSession', s);
    return {
      s,
      meta: (r._meta as Record<string, Record<string, unknown>>)['agent-commerce.example/http'] ?? {},
    };
  };

  let n = 0;
  const meta = () => ({ api_version: API_VERSION, idempotency_key: `dist-${Date.now()}-${++n}` });

  beforeAll(async () => {
    sys = await topology();
  }, 180_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
  });

  describe('ACP tools across gateway replicas', () => {
    it('creates through one replica, updates, completes and reads through the other', async () => {
      const { key } = await issueKey(sys, { spiffeId: `${AGENT}/acp-mcp-dist` });
      const [a, b] = await Promise.all(sys.gateways.map((g) => connect(g, key)));
      if (!a || !b) throw new Error('two replicas expected');

      const payload = {
        currency: 'usd',
        capabilities: {},
        line_items: [{ id: 'SKU-ABC-000001', quantity: 2 }],
      };
      const m = meta();
      const created = await session(a, 'create_checkout_session', { meta: m, payload });
      const replayed = await session(b, 'create_checkout_session', { meta: m, payload });
      expect(replayed.s).toEqual(created.s);
      expect(replayed.meta.idempotent_replayed).toBe(true);
      const id = created.s.id;

      const updated = await session(b, 'update_checkout_session', {
        meta: meta(),
        id,
        payload: { line_items: [{ id: 'SKU-ABC-000001', quantity: 3 }] },
      });
      expect(updated.s.status).toBe('ready_for_payment');

      const done = await session(a, 'complete_checkout_session', {
        meta: meta(),
        id,
        payload: { payment_data: { purchase_order_number: 'PO-DIST-1' } },
      });
      expect(done.s.status).toBe('completed');

      const read = await session(b, 'get_checkout_session', { meta: { api_version: API_VERSION }, id });
      expect(read.s).toEqual(done.s);

      const refused = await b
        .callTool({ name: 'cancel_checkout_session', arguments: { meta: meta(), id } })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(-32000);
      expectAcp('Error', (refused as McpError).data);
    }, 60_000);
  });
}
