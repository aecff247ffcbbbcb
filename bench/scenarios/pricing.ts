/**
 * Pricing: POST /v1/prices/calculate on a HIT and on a MISS, embedded (memory cache, embedded
 * SQL catalog, in-process bus) and distributed-style (Redis cache and Redis Streams, PostgreSQL
 * catalog), beside a bare Fastify route measured in the same run.
 *
 * HIT rows run the whole system a user starts (`npm start`, all subgraphs and the gateway in it)
 * with requests cycling over 100 keys that the warm-up has stored. MISS rows need every request
 * to miss, but the load generator cycles a fixed list of bodies from overlapping offsets, so
 * bodies repeat within the 60 s lifetime; there a bench-only preHandler makes each request's
 * region unique after validation, on a pricing process built the way `npm run start:pricing`
 * builds one (same platform, catalog of 10,000 SKUs, cache, events and route).
 */
import type { FastifyPluginAsync } from 'fastify';
import { buildEmbedded } from '../../gateway/topology.ts';
import { freshPostgres, TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { type Config, loadConfig } from '../../lib/config.ts';
import { createHttpApp } from '../../lib/http/app.ts';
import { createPlatform } from '../../lib/platform.ts';
import { createRedis } from '../../lib/redis.ts';
import { createPricingSubgraph } from '../../subgraphs/pricing/index.ts';
import type { HttpRequestSpec, HttpTarget, Scenario } from '../harness.ts';
import { bareFastify } from './foundation.ts';

const GROUP = 'pricing';
const BASELINE = 'bare Fastify route';
const CATEGORY_CODES = ['ELC', 'TOY', 'TOL', 'BOK', 'APP', 'GRC', 'HOM', 'GRD', 'SPT', 'BTY', 'OFC', 'AUT'];

/** Bodies over real catalog SKUs (USD and EUR exist for every generated product). */
function bodies(n: number): HttpRequestSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    method: 'POST' as const,
    path: '/v1/prices/calculate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sku: `SKU-${CATEGORY_CODES[i % CATEGORY_CODES.length]}-${String(Math.floor(i / CATEGORY_CODES.length) + 1).padStart(6, '0')}`,
      currency: i % 2 ? 'EUR' : 'USD',
      region: ['EU', 'US', 'APAC'][i % 3],
      customerSegment: i % 4 ? 'STANDARD' : 'VIP',
      inventoryLevel: (i * 37) % 900,
    }),
  }));
}

interface Backend {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

const embeddedBackend = async (): Promise<Backend> => ({ env: {}, cleanup: async () => {} });

/** Redis (cache, events) and PostgreSQL (catalog), each isolated for this run. */
async function redisBackend(): Promise<Backend> {
  const prefix = uniquePrefix('bench-pricing');
  const pg = await freshPostgres('bench_pricing');
  return {
    env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, DATABASE_URL: pg.url },
    async cleanup() {
      await pg.drop();
      const r = createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false });
      const keys = await r.keys(`${prefix}*`);
      for (let i = 0; i < keys.length; i += 1000) await r.del(...keys.slice(i, i + 1000));
      r.disconnect();
    },
  };
}

const config = (env: Record<string, string>): Config =>
  loadConfig({ EMBEDDED_DB: 'memory', LOG_LEVEL: 'silent', CATALOG_SIZE: '10000', PORT: '0', ...env });

async function hitTarget(backend: Backend): Promise<HttpTarget> {
  const sys = await buildEmbedded(config(backend.env));
  const url = await sys.listen(0);
  return {
    url,
    requests: bodies(100),
    async close() {
      await sys.close();
      await backend.cleanup();
    },
  };
}

async function missTarget(backend: Backend): Promise<HttpTarget> {
  const cfg = config(backend.env);
  const platform = await createPlatform(cfg, { service: 'pricing' });
  const pricing = await createPricingSubgraph(platform);
  const app = createHttpApp(platform);
  const routes = pricing.routes as FastifyPluginAsync;
  await app.register(async (scope) => {
    let n = 0;
    // Bench only: a unique region per request, so that every request is a cache miss.
    scope.addHook('preHandler', async (req) => {
      (req.body as { region: string }).region = `bench-${n++}`;
    });
    await scope.register(routes);
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    requests: bodies(1000),
    async close() {
      await app.close();
      await pricing.close?.();
      await platform.close();
      await backend.cleanup();
    },
  };
}

const redisNote = `Redis ${TEST_REDIS_URL}, PostgreSQL ${new URL(TEST_DATABASE_URL).host}`;

export const scenarios: Scenario[] = [
  {
    kind: 'http',
    group: GROUP,
    name: BASELINE,
    async setup() {
      const { url, close } = await bareFastify();
      return { url, requests: [{ path: '/bare' }], close };
    },
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'price HIT, embedded (memory cache)',
    baseline: BASELINE,
    setup: async () => hitTarget(await embeddedBackend()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'price MISS, embedded (catalog mirrored from PGlite, memory cache, in-process events)',
    baseline: BASELINE,
    setup: async () => missTarget(await embeddedBackend()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: `price HIT, Redis cache (${redisNote})`,
    baseline: BASELINE,
    setup: async () => hitTarget(await redisBackend()),
  },
  {
    kind: 'http',
    group: GROUP,
    name: `price MISS, Redis cache and Streams, PostgreSQL catalog`,
    baseline: BASELINE,
    setup: async () => missTarget(await redisBackend()),
  },
];
