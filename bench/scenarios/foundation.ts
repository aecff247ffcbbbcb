import Fastify from 'fastify';
import { buildDistributedGateway } from '../../gateway/topology.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import { startEmbedded, testConfig } from '../../test/support/system.ts';
import type { HttpRequestSpec, Scenario } from '../harness.ts';
import { startNaiveGateway } from '../peers/naive-gateway.ts';
import { startSubgraphProcesses } from '../peers/subgraph-processes.ts';

/** The baseline every HTTP group is compared with: a bare Fastify JSON route. */
export async function bareFastify(status = 200, body: unknown = { ok: true }) {
  const app = Fastify();
  app.all('/bare', async (_req, reply) => reply.code(status).send(body));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

const CATALOG_SIZE = 10_000;

/** The federated query of the foundation rows: a 10-line cart quote, pricing then promotions. */
export function spanningQuery(): HttpRequestSpec {
  const skus = generateCatalog(CATALOG_SIZE)
    .filter((_, i) => i % 997 === 0)
    .slice(0, 10)
    .map((p) => p.sku);
  return {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query Quote($input: CartQuoteInput!) {
        cartQuote(input: $input) {
          id subtotal
          lines { sku quantity unitPrice lineTotal appliedModifiers source }
          promotions { discountTotal total applied { promotionId amount } }
        }
      }`,
      variables: {
        input: {
          lines: skus.map((sku, i) => ({ sku, quantity: 1 + (i % 3) })),
          currency: 'USD',
          region: 'EU',
        },
      },
    }),
  };
}

export const scenarios: Scenario[] = [
  {
    kind: 'http',
    group: 'foundation',
    name: 'bare Fastify route',
    async setup() {
      const { url, close } = await bareFastify();
      return { url, requests: [{ path: '/bare' }], close };
    },
  },
  {
    kind: 'http',
    group: 'foundation',
    name: 'naive Apollo gateway over HTTP, 10-line cart quote',
    baseline: 'bare Fastify route',
    async setup() {
      const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: String(CATALOG_SIZE) });
      const naive = await startNaiveGateway(subgraphs.urls, subgraphs.env.GATEWAY_SHARED_SECRET ?? '');
      return {
        url: naive.url,
        requests: [spanningQuery()],
        async close() {
          await naive.close();
          await subgraphs.close();
        },
      };
    },
  },
  {
    kind: 'http',
    group: 'foundation',
    name: 'distributed gateway, 10-line cart quote',
    baseline: 'naive Apollo gateway over HTTP, 10-line cart quote',
    async setup() {
      const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: String(CATALOG_SIZE) });
      const gw = await buildDistributedGateway(
        testConfig({
          ...subgraphs.env,
          PRICING_URL: subgraphs.urls.pricing,
          PROMOTIONS_URL: subgraphs.urls.promotions,
          PROCUREMENT_URL: subgraphs.urls.procurement,
          CATALOG_SIZE: String(CATALOG_SIZE),
        }),
      );
      const url = await gw.listen(0);
      return {
        url,
        requests: [spanningQuery()],
        async close() {
          await gw.close();
          await subgraphs.close();
        },
      };
    },
  },
  {
    kind: 'http',
    group: 'foundation',
    name: 'embedded gateway, 10-line cart quote',
    baseline: 'naive Apollo gateway over HTTP, 10-line cart quote',
    async setup() {
      const sys = await startEmbedded({ CATALOG_SIZE: String(CATALOG_SIZE) });
      return { url: sys.url, requests: [spanningQuery()], close: () => sys.close() };
    },
  },
];
