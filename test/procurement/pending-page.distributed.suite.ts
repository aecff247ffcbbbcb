/**
 * Issue 31 ("Also"): a `pendingApprovals` page was once seen without `hasNextPage`, a non-null
 * field; it was not reproduced. Paths looked at: the resolver (always sets it from nextCursor),
 * graphql-jit in the embedded gateway and graphql-js in a subgraph (a failing non-null field in
 * a node nulls the whole non-null page, never a part of it), and the gateway's result shaping
 * when a later fetch fails. The last is the one a page reaches with errors beside data: the
 * queue's operation asks pricing for each order's product, so with pricing unreachable the
 * gateway answers data and an error. This test pins that path in the distributed topology:
 * every page, paged one order at a time, keeps endCursor and hasNextPage (the embedded paths are
 * in approval.e2e.test.ts, "lists pending orders oldest first … a page at a time").
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DistributedSystem } from '../../harness/distributed.ts';

const OPERATION = readFileSync(
  new URL('../../schemas/operations/pending-approvals.graphql', import.meta.url),
  'utf8',
);
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/pending-page';

/** Runs on the topology `topology` gives (test/procurement/replicas.distributed.test.ts shares one), which it does not stop. */
export function pendingPageSuite(topology: () => Promise<DistributedSystem>): void {
  let sys: DistributedSystem;
  beforeAll(async () => {
    sys = await topology();
  }, 120_000);

  interface Page {
    nodes: { order: { orderId: string; product: unknown } }[];
    endCursor: string | null;
    hasNextPage: boolean;
  }

  async function pages(token: string): Promise<{ pages: Page[]; errors: unknown[] }> {
    const out: Page[] = [];
    const errors: unknown[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r = await sys.gql(OPERATION, { token, variables: { first: 1, ...(after ? { after } : {}) } });
      errors.push(...(r.errors ?? []));
      const page = r.data?.pendingApprovals as Page;
      expect(Object.keys(page).sort()).toEqual(['endCursor', 'hasNextPage', 'nodes']);
      expect(typeof page.hasNextPage).toBe('boolean');
      expect(page.hasNextPage).toBe(page.endCursor !== null);
      out.push(page);
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    return { pages: out, errors };
  }

  describe('the pendingApprovals page (distributed)', () => {
    it('keeps endCursor and hasNextPage on every page, with pricing up and with pricing unreachable', async () => {
      const admin = await sys.token(['spend:admin', 'orders:approve'], 'ops-pages');
      const set = await sys.gql('mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }', {
        token: admin,
        variables: {
          p: { subject: AGENT, currency: 'USD', period: 'DAY', budget: '1000.00', approvalAbove: '10.00' },
        },
      });
      expect(set.errors).toBeUndefined();
      for (const amount of [20, 30, 40]) {
        const r = await fetch(`${sys.gateways[0]}/v2/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
          body: JSON.stringify({
            agent_id: 'agent-0000001',
            sku: 'SKU-ABC-000001',
            quantity: 1,
            max_budget_usd: amount,
          }),
        });
        expect(r.status).toBe(202);
      }

      const up = await pages(admin);
      expect(up.errors).toEqual([]);
      expect(up.pages.map((p) => p.hasNextPage)).toEqual([true, true, false]);
      expect(up.pages.every((p) => p.nodes[0]?.order.product !== null)).toBe(true);

      await sys.processes[0]?.stop(); // pricing
      const down = await pages(admin);
      expect(down.errors.length).toBeGreaterThan(0);
      expect(down.pages.map((p) => p.hasNextPage)).toEqual([true, true, false]);
      expect(down.pages.map((p) => p.nodes[0]?.order.orderId)).toEqual(
        up.pages.map((p) => p.nodes[0]?.order.orderId),
      );
      expect(down.pages.every((p) => p.nodes[0]?.order.product === null)).toBe(true);
    }, 60_000);
  });
}
