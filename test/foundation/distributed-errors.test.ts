/**
 * A subgraph's GraphQL error keeps its code and message through the distributed gateway's HTTP
 * hop, as it does embedded. Apollo Server answers a non-2xx status when a resolver's error sets
 * `extensions.http.status` (422, 404, 401, 403), and @apollo/gateway's RemoteGraphQLDataSource
 * turned every non-2xx reply into an INTERNAL_SERVER_ERROR "422: Unprocessable Entity": the
 * operator's BAD_USER_INPUT and the reasons it carries were lost on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphFactories } from '../../gateway/subgraphs.ts';
import { buildDistributedGateway } from '../../gateway/topology.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { testConfig } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { buildSubgraphServer } from '../../lib/graphql/serve-subgraph.ts';

interface GqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe('subgraph errors through the distributed gateway', () => {
  type Subgraph = Awaited<ReturnType<typeof buildSubgraphServer>>;
  const subgraphs: Subgraph[] = [];
  let gateway: Awaited<ReturnType<typeof buildDistributedGateway>>;
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let config: ReturnType<typeof testConfig>;

  beforeAll(async () => {
    pg = await freshPostgres('errors');
    const env: Record<string, string> = {
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('errors'),
      GATEWAY_SHARED_SECRET: 'errors-suite-secret-0123456789abcdef',
    };
    config = testConfig(env);
    env.DATA_DIR = config.DATA_DIR;
    const urls: Record<string, string> = {};
    for (const name of ['pricing', 'promotions', 'procurement'] as const) {
      const server = await buildSubgraphServer(name, subgraphFactories[name], testConfig(env));
      urls[name] = await server.app.listen({ port: 0, host: '127.0.0.1' });
      subgraphs.push(server);
    }
    gateway = await buildDistributedGateway(
      testConfig({
        ...env,
        PRICING_URL: urls.pricing ?? '',
        PROMOTIONS_URL: urls.promotions ?? '',
        PROCUREMENT_URL: urls.procurement ?? '',
      }),
    );
    await gateway.listen(0);
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    for (const s of subgraphs) await s.close();
    await pg?.drop();
  });

  async function gql(query: string, variables: Record<string, unknown>, roles: string[]) {
    const token = await mintDevToken(config, { subject: 'ops', roles, ttlSeconds: 300 });
    const res = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: (await res.json()) as GqlBody };
  }

  const UPSERT = 'mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId } }';
  const STATUS =
    'mutation($id: ID!) { setPromotionStatus(promotionId: $id, status: INACTIVE) { promotionId } }';

  it.each([
    [
      'an invalid rule',
      UPSERT,
      { rule: { promotionId: 'X', priority: 'high' } },
      ['promotions:admin'],
      'BAD_USER_INPUT',
    ],
    ['an unknown promotion', STATUS, { id: 'NO-SUCH-PROMOTION' }, ['promotions:admin'], 'NOT_FOUND'],
    ['a caller without the role', UPSERT, { rule: { promotionId: 'X' } }, ['orders:read'], 'FORBIDDEN'],
  ])('%s keeps its code and message', async (_what, query, variables, roles, code) => {
    const { body } = await gql(query, variables, roles);
    expect(body.errors?.[0]?.extensions?.code).toBe(code);
    expect(body.errors?.[0]?.message).not.toMatch(/^\d{3}: /);
  });
});
