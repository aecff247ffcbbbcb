/**
 * Edge composition: a 10-line cart quote (prices, then promotions with one rule that applies,
 * then a signed quote token) over REST (GET /cart/quote) and GraphQL (Query.cartQuote with
 * CartQuote.promotions and CartQuote.quoteToken), embedded and distributed, beside the naive
 * peer measured in the same run: a plain ApolloGateway with the default RemoteGraphQLDataSource
 * over HTTP to the three subgraph processes, answering the same GraphQL quote.
 *
 * Targets (issue 6), 10 connections: REST p99 ≤ 5 ms, GraphQL p99 ≤ 10 ms, GraphQL ≥ 3× the
 * naive gateway's req/s.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess } from '../../harness/processes.ts';
import { QUOTE_CATALOG_SIZE, QUOTE_REQUESTS } from '../../harness/requests.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { Config } from '../../lib/config.ts';
import type { HttpRequestSpec, Scenario } from '../harness.ts';
import { startNaiveGateway } from '../peers/naive-gateway.ts';
import { type SubgraphProcesses, startSubgraphProcesses } from '../peers/subgraph-processes.ts';

const GROUP = 'quote';
const NAIVE = 'naive Apollo gateway over HTTP, GraphQL quote';
const CATALOG_SIZE = QUOTE_CATALOG_SIZE;

/** Adds the bench rule through a gateway that forwards the caller's token. */
async function addRule(url: string, config: Config): Promise<void> {
  const token = await mintDevToken(config, { subject: 'bench', roles: ['promotions:admin'] });
  const res = await gql(url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
  if (res.errors) throw new Error(`could not add the bench promotion: ${JSON.stringify(res.errors)}`);
}

/** Adds the bench rule on the promotions process itself (the naive peer forwards no token). */
export async function addRuleDirect(subgraphs: SubgraphProcesses): Promise<void> {
  const config = testConfig(subgraphs.env);
  const token = await mintDevToken(config, { subject: 'bench', roles: ['promotions:admin'] });
  const res = await fetch(`${subgraphs.urls.promotions}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-gateway-secret': config.GATEWAY_SHARED_SECRET,
    },
    body: JSON.stringify({ query: UPSERT_PROMOTION, variables: { rule: TOOLS_RULE } }),
  });
  const body = (await res.json()) as { errors?: unknown };
  if (body.errors) throw new Error(`could not add the bench promotion: ${JSON.stringify(body.errors)}`);
}

/**
 * The embedded system as `npm start` runs it: the compiled gateway in its own process (so the
 * load generator here and the server under test each have a core), a fresh data directory.
 */
async function embedded(request: HttpRequestSpec) {
  const env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-bench-quote-')),
    CATALOG_SIZE: String(CATALOG_SIZE),
  };
  const sys = await startProcess('embedded', env, 120_000, { compiled: true });
  await addRule(sys.url, testConfig(env));
  return { url: sys.url, requests: [request], close: () => sys.stop().then(() => {}) };
}

/** The distributed gateway (compiled, its own process) over the three subgraph processes, Redis and Postgres. */
async function distributed(request: HttpRequestSpec) {
  const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: String(CATALOG_SIZE) });
  // Same DATA_DIR as the subgraphs: one quote-token key file for the edge and promotions.
  const gw = await startProcess(
    'gateway',
    {
      ...subgraphs.env,
      TOPOLOGY: 'distributed',
      LOG_LEVEL: 'info',
      PRICING_URL: subgraphs.urls.pricing,
      PROMOTIONS_URL: subgraphs.urls.promotions,
      PROCUREMENT_URL: subgraphs.urls.procurement,
    },
    120_000,
    { compiled: true },
  );
  await addRuleDirect(subgraphs);
  return {
    url: gw.url,
    requests: [request],
    async close() {
      await gw.stop();
      await subgraphs.close();
    },
  };
}

export const scenarios: Scenario[] = [
  {
    kind: 'http',
    group: GROUP,
    name: NAIVE,
    async setup() {
      const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: String(CATALOG_SIZE) });
      const naive = await startNaiveGateway(subgraphs.urls, subgraphs.env.GATEWAY_SHARED_SECRET ?? '');
      await addRuleDirect(subgraphs);
      return {
        url: naive.url,
        requests: [QUOTE_REQUESTS.graphql()],
        async close() {
          await naive.close();
          await subgraphs.close();
        },
      };
    },
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'GraphQL quote, embedded',
    baseline: NAIVE,
    setup: () => embedded(QUOTE_REQUESTS.graphql()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'GraphQL quote, distributed',
    baseline: NAIVE,
    setup: () => distributed(QUOTE_REQUESTS.graphql()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'REST GET /cart/quote, embedded',
    baseline: NAIVE,
    setup: () => embedded(QUOTE_REQUESTS.rest()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'REST GET /cart/quote, distributed',
    baseline: NAIVE,
    setup: () => distributed(QUOTE_REQUESTS.rest()),
  },
  // The latency floor without queueing: one connection, so a request never waits behind the
  // other nine and its p99 is its own work plus the collector's pauses (docs/performance.md).
  {
    kind: 'http',
    group: GROUP,
    name: 'GraphQL quote, embedded, 1 connection',
    connections: 1,
    setup: () => embedded(QUOTE_REQUESTS.graphql()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'REST GET /cart/quote, embedded, 1 connection',
    connections: 1,
    setup: () => embedded(QUOTE_REQUESTS.rest()),
  },
];
