import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { gql } from '../../harness/system.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';

const SECRET = 'distributed-test-secret-0123456789';
const CATALOG_SIZE = 300;

describe('distributed topology: one process per subgraph, gateway over HTTP', () => {
  const procs: Partial<Record<'pricing' | 'promotions' | 'procurement' | 'gateway', ServiceProcess>> = {};
  let dropPg: () => Promise<void> = async () => {};
  let env: Record<string, string>;

  beforeAll(async () => {
    const pg = await freshPostgres('distributed');
    dropPg = pg.drop;
    env = {
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('distributed'),
      GATEWAY_SHARED_SECRET: SECRET,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-distributed-')),
      CATALOG_SIZE: String(CATALOG_SIZE),
    };
    procs.pricing = await startProcess('pricing', env, 90_000);
    [procs.promotions, procs.procurement] = await Promise.all([
      startProcess('promotions', env, 90_000),
      startProcess('procurement', env, 90_000),
    ]);
    procs.gateway = await startProcess(
      'gateway',
      {
        ...env,
        TOPOLOGY: 'distributed',
        PRICING_URL: procs.pricing.url,
        PROMOTIONS_URL: procs.promotions.url,
        PROCUREMENT_URL: procs.procurement.url,
      },
      90_000,
    );
  }, 240_000);

  afterAll(async () => {
    await Promise.all(Object.values(procs).map((p) => p?.stop()));
    await dropPg();
  });

  it('answers a cart quote that spans pricing and promotions through the gateway', async () => {
    const skus = generateCatalog(CATALOG_SIZE)
      .slice(0, 3)
      .map((p) => p.sku);
    const res = await gql(
      procs.gateway?.url ?? '',
      `query Q($input: CartQuoteInput!) {
        cartQuote(input: $input) { id subtotal lines { sku quantity } promotions { total } }
      }`,
      {
        variables: {
          input: { lines: skus.map((sku) => ({ sku, quantity: 2 })), currency: 'USD', region: 'EU' },
        },
      },
    );
    expect(res.errors).toBeUndefined();
    const quote = res.data?.cartQuote as {
      lines: { sku: string }[];
      subtotal: number;
      promotions: { total: number };
    };
    expect(quote.lines.map((l) => l.sku)).toEqual(skus);
    expect(quote.promotions.total).toBeLessThanOrEqual(quote.subtotal);
  });

  it('has each subgraph refuse GraphQL calls that do not come from the gateway', async () => {
    for (const name of ['pricing', 'promotions', 'procurement'] as const) {
      const url = procs[name]?.url ?? '';
      const anonymous = await gql(url, '{ __typename }');
      expect(anonymous.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-secret': 'wrong-secret-wrong-secret' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(
        ((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code,
      ).toBe('FORBIDDEN');
    }
  });

  it('serves readiness with its Redis and Postgres checks in every process', async () => {
    for (const p of Object.values(procs)) {
      const res = await fetch(`${p?.url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ checks: { db: 'ok', redis: 'ok' } });
    }
  });

  it("starts each process with the suite's node flags (vitest.config.ts: --no-opt unless set otherwise)", () => {
    expect(process.env.TEST_PROCESS_NODE_FLAGS, 'vitest.config.ts sets it').toBeDefined();
    const flags = process.env.TEST_PROCESS_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
    for (const p of Object.values(procs)) {
      const argv = readFileSync(`/proc/${p?.child.pid}/cmdline`, 'utf8').split('\0');
      for (const flag of flags) expect(argv).toContain(flag);
    }
  });
});
