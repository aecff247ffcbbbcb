/**
 * Agent orders: POST /api/v2/procurement/orders through the whole check chain (identity, scope,
 * block, rate limit, parse, contract, idempotency, order domain, audit) of the system a user
 * starts (`npm start`), beside a bare Fastify route answering the same 201 in the same run.
 *
 *   order store in memory   the gateway's own cost (ORDER_STORE=memory: orders and audit in memory)
 *   embedded SQL store      PGlite on disk under a temp DATA_DIR (the default `npm start`)
 *   Postgres + Redis        DATABASE_URL and REDIS_URL (the distributed state adapters)
 *
 * The bucket is made large (RATE_LIMIT_CAPACITY) so the load measures the checks, not the limit.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { buildEmbedded } from '../../gateway/topology.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { loadConfig } from '../../lib/config.ts';
import type { HttpRequestSpec, HttpTarget, Scenario } from '../harness.ts';
import { bareFastify } from './foundation.ts';

const GROUP = 'orders';
const BASELINE = 'bare Fastify route (same 201)';
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const BODY = JSON.stringify({
  agent_id: 'agent-bench-01',
  sku: 'SKU-BEN-000001',
  quantity: 2,
  max_budget_usd: 120.5,
});
const RESPONSE = {
  status: 'APPROVED',
  order_id: 'ord_0123456789abcdef0123456789abcdef',
  allocated_budget: 120.5,
  processed_at: 1_767_225_600.123,
};

const order = (): HttpRequestSpec[] => [
  {
    method: 'POST',
    path: '/api/v2/procurement/orders',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
    body: BODY,
  },
];

const apps = new WeakMap<HttpTarget, Awaited<ReturnType<typeof buildEmbedded>>['app']>();
const appOf = (t: HttpTarget) => {
  const app = apps.get(t);
  if (!app) throw new Error('not an embedded system target');
  return app;
};

async function system(env: Record<string, string>, cleanup = async () => {}): Promise<HttpTarget> {
  const sys = await buildEmbedded(
    loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-bench-orders-')),
      EMBEDDED_DB: 'memory',
      LOG_LEVEL: 'silent',
      CATALOG_SIZE: '500',
      RATE_LIMIT_CAPACITY: '1000000000',
      RATE_LIMIT_REFILL_PER_SECOND: '1000000',
      ...env,
    }),
  );
  const url = await sys.listen(0);
  const target: HttpTarget = {
    url,
    requests: order(),
    expectStatus: 201,
    async close() {
      await sys.close();
      await cleanup();
    },
  };
  apps.set(target, sys.app);
  return target;
}

/**
 * The chain's own cost per request, without sockets or a load generator competing for the same
 * cores: Fastify's inject() into the embedded system (all checks, memory store) against a bare
 * Fastify route answering the same 201. The difference of the means is the gateway overhead.
 */
const IN_PROCESS = GROUP;
const INJECT_BASELINE = 'bare Fastify route (inject)';
const injectOrder = {
  method: 'POST' as const,
  url: '/api/v2/procurement/orders',
  headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
  payload: BODY,
};

export const scenarios: Scenario[] = [
  {
    kind: 'fn',
    group: IN_PROCESS,
    name: INJECT_BASELINE,
    iterations: 20_000,
    async setup() {
      const app = Fastify();
      app.post('/bare', async (_req, reply) => reply.code(201).send(RESPONSE));
      await app.ready();
      const req = { ...injectOrder, url: '/bare' };
      return { run: () => app.inject(req), close: () => app.close() };
    },
  },
  {
    kind: 'fn',
    group: IN_PROCESS,
    name: 'order path, all checks, order store in memory (inject)',
    baseline: INJECT_BASELINE,
    iterations: 20_000,
    async setup() {
      const t = await system({ ORDER_STORE: 'memory' });
      return {
        async run() {
          const r = await appOf(t).inject(injectOrder);
          if (r.statusCode !== 201) throw new Error(`expected 201, got ${r.statusCode}: ${r.body}`);
        },
        close: () => t.close(),
      };
    },
  },
  {
    kind: 'http',
    group: GROUP,
    name: BASELINE,
    async setup() {
      const { url, close } = await bareFastify(201, RESPONSE);
      return {
        url,
        requests: [
          { method: 'POST', path: '/bare', headers: { 'content-type': 'application/json' }, body: BODY },
        ],
        close,
      };
    },
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'order path, all checks, order store in memory',
    baseline: BASELINE,
    setup: () => system({ ORDER_STORE: 'memory' }),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'order path, embedded SQL store (PGlite on disk)',
    baseline: BASELINE,
    setup: () => system({ EMBEDDED_DB: 'disk' }),
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'order path, Postgres + Redis',
    baseline: BASELINE,
    async setup() {
      const pg = await freshPostgres('bench_orders');
      return system(
        { DATABASE_URL: pg.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix('bench-orders') },
        () => pg.drop(),
      );
    },
  },
  {
    kind: 'http',
    group: GROUP,
    name: 'refused at identity (401), order store in memory',
    baseline: BASELINE,
    async setup() {
      const t = await system({ ORDER_STORE: 'memory' });
      return {
        ...t,
        requests: [{ ...(order()[0] as HttpRequestSpec), headers: { 'content-type': 'application/json' } }],
        expectStatus: 401,
      };
    },
  },
];
