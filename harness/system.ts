/**
 * Starts the real system the way a user does, on an ephemeral port, with its own data dir.
 * `startEmbedded()` is `npm start` in a test; pass env to switch adapters (REDIS_URL, …).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEmbedded, type RunningSystem, type StartOptions } from '../gateway/topology.ts';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { type Config, loadConfig } from '../lib/config.ts';
import { TEST_STORE_ENV } from './services.ts';
import { leaseStore } from './store-pool.ts';

process.env.APOLLO_TELEMETRY_DISABLED = '1';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-test-')),
    EMBEDDED_DB: 'memory',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    CATALOG_SIZE: '500',
    // A test's system takes its requests at once; the warm-up has its own test.
    WARM_UP_MS: '0',
    // Nor is any request shed under a busy test machine; the shedding has its own test.
    SHED_QUOTE_BUDGET_MS: '0',
    SHED_ORDER_BUDGET_MS: '0',
    // One descriptor accepts (no child process per test system); the accepting has its own test.
    ACCEPT_HANDLES: '0',
    ...TEST_STORE_ENV,
    ...env,
  });
}

export interface TestSystem extends RunningSystem {
  config: Config;
  token(roles: string[], subject?: string): Promise<string>;
  gql(query: string, opts?: { token?: string; variables?: Record<string, unknown> }): Promise<GqlResult>;
  subgraphRequests(): Promise<number>;
}

export interface GqlResult {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function startEmbedded(
  env: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<TestSystem> {
  const config = testConfig(env);
  // An in-memory store the test did not pass in is a reused one, emptied (harness/store-pool.ts).
  const lease =
    !opts.db && !config.DATABASE_URL && config.EMBEDDED_DB === 'memory'
      ? await leaseStore(config.EMBEDDED_DB_TEMPLATE)
      : undefined;
  // A failed start gives its store back (its error, not the release's, is the one thrown).
  const giveBack = async (e: unknown): Promise<never> => {
    await lease?.release().catch(() => {});
    throw e;
  };
  const sys = await buildEmbedded(config, lease ? { ...opts, db: lease.db } : opts).catch(giveBack);
  if (lease) {
    const close = sys.close.bind(sys);
    sys.close = async () => {
      try {
        await close();
      } finally {
        await lease.release();
      }
    };
  }
  await sys.listen(0).catch(giveBack);
  return Object.assign(sys, {
    config,
    token: (roles: string[], subject = 'test-user') => mintDevToken(config, { subject, roles }),
    gql: (query: string, o: { token?: string; variables?: Record<string, unknown> } = {}) =>
      gql(sys.url, query, o),
    async subgraphRequests() {
      const m = await sys.platform.metrics.getSingleMetric('gateway_subgraph_requests_total')?.get();
      return (m?.values ?? []).reduce((n, v) => n + v.value, 0);
    },
  });
}

export async function gql(
  baseUrl: string,
  query: string,
  opts: { token?: string; variables?: Record<string, unknown> } = {},
): Promise<GqlResult> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
    },
    body: JSON.stringify({ query, variables: opts.variables }),
  });
  return { status: res.status, ...((await res.json()) as object) };
}
