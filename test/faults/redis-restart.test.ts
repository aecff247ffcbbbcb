/**
 * Redis crashes (its data lost, as when a cache node dies) and comes back while orders and
 * cart quotes keep arriving (distributed topology: pricing, promotions, procurement and a
 * gateway as processes, on a throwaway redis-server). Promise, as documented:
 * - the agent gateway fails closed: without its block counts and rate buckets it answers 503
 *   with Retry-After, never places an order it could not check, never another 5xx;
 * - quotes keep answering 200, degrading to the last-known or catalog price and saying so in
 *   each line's `source`;
 * - nothing crashes, and both recover when Redis is back, without a restart of ours.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../../harness/processes.ts';
import { freshPostgres } from '../../harness/services.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import { figures, orderStream } from './support/order-stream.ts';
import { type RedisServer, throwawayRedis } from './support/redis-server.ts';
import { gatewayEnv, start, stopAll, storedOrders, topologyEnv } from './support/topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SKUS = generateCatalog(50).map((p) => p.sku);

let store: Awaited<ReturnType<typeof freshPostgres>>;
let redis: RedisServer | undefined;
let procs: ServiceProcess[] = [];
let gateway: ServiceProcess | undefined;

beforeAll(async () => {
  store = await freshPostgres('faults_redis');
  redis = await throwawayRedis();
  const env = {
    ...topologyEnv(store.url, 'redis'),
    REDIS_URL: redis.url,
    CATALOG_SIZE: '50',
    // An open breaker tries pricing again after 1 s (5 s by default), so recovery fits the test.
    QUOTE_BREAKER_HALF_OPEN_MS: '1000',
  };
  const [pricing, promotions, procurement] = await Promise.all([
    start('pricing', env),
    start('promotions', env),
    start('procurement', env),
  ]);
  procs = [pricing, promotions, procurement];
  gateway = await start('gateway', {
    ...gatewayEnv(env, procurement.url),
    PRICING_URL: pricing.url,
    PROMOTIONS_URL: promotions.url,
  });
}, 150_000);

afterAll(async () => {
  await stopAll(gateway, ...procs);
  await redis?.remove();
  await store?.drop();
});

interface Quote {
  readonly at: number;
  readonly status: number;
  readonly sources: readonly string[];
}

async function quoteLoop(url: string, until: Promise<unknown>): Promise<Quote[]> {
  const out: Quote[] = [];
  let done = false;
  void until.then(() => {
    done = true;
  });
  for (let i = 0; !done; i++) {
    const sku = SKUS[i % SKUS.length];
    try {
      const res = await fetch(`${url}/cart/quote?line=${sku}:2&currency=USD&region=EU`, {
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as { lines?: { source: string }[] };
      out.push({ at: Date.now(), status: res.status, sources: (body.lines ?? []).map((l) => l.source) });
    } catch (err) {
      out.push({ at: Date.now(), status: 0, sources: [(err as Error).message] });
    }
    await sleep(20);
  }
  return out;
}

describe('Redis crashed and restarted under orders and quotes', () => {
  it('fails orders closed with 503, keeps quoting from fallbacks, recovers by itself', async () => {
    const r = redis as RedisServer;
    const gw = gateway as ServiceProcess;
    let downAt = 0;
    let startingAt = 0;
    let upAt = 0;
    const fault = (async () => {
      await sleep(1500);
      await r.crash();
      downAt = Date.now();
      await sleep(2000);
      startingAt = Date.now();
      await r.start();
      upAt = Date.now();
      await sleep(2500);
    })();
    const [run, quotes] = await Promise.all([
      orderStream({ urls: () => [gw.url], clients: 4, until: fault, drainMs: 15_000, pauseMs: 10 }),
      quoteLoop(gw.url, fault),
    ]);

    const stored = await storedOrders(store.url);
    const f = figures(run, new Map([...stored].map(([id, s]) => [id, s.rows])));
    const quoteStatuses: Record<number, number> = {};
    for (const q of quotes) quoteStatuses[q.status] = (quoteStatuses[q.status] ?? 0) + 1;
    const downSources = new Set(
      quotes.filter((q) => q.at > downAt + 200 && q.at < startingAt).flatMap((q) => q.sources),
    );
    console.log(
      `redis restart: orders ${JSON.stringify(f)}; quotes ${JSON.stringify(quoteStatuses)}, line sources while down ${JSON.stringify([...downSources])}`,
    );

    // Orders: fail closed while down, exactly once overall.
    expect(
      run.attempts.every((a) => a.status === 201 || a.status === 503),
      JSON.stringify(f.byStatus),
    ).toBe(true);
    for (const a of run.attempts) if (a.status === 503) expect(a.retryAfter).toMatch(/^\d+$/);
    const ordersWhileDown = run.attempts.filter((a) => a.at > downAt + 200 && a.at < startingAt);
    expect(ordersWhileDown.length).toBeGreaterThan(0);
    expect(ordersWhileDown.filter((a) => a.status === 201)).toEqual([]);
    expect(run.attempts.some((a) => a.status === 201 && a.at > upAt)).toBe(true);
    expect(f.acknowledged).toBe(f.ordersSent);
    expect(f.acknowledgedNotStored).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(f.stored).toBe(f.acknowledged);

    // Quotes: always answered.
    expect(
      quotes.every((q) => q.status === 200),
      JSON.stringify(quoteStatuses),
    ).toBe(true);
    expect(quotes.every((q) => q.sources.length === 1)).toBe(true);
    // While down, no line can claim a fresh price it could not have read: fallbacks only.
    for (const source of downSources) expect(['last_known', 'static', 'cache', 'live']).toContain(source);
    expect(downSources.size).toBeGreaterThan(0);
    // Back: priced by pricing again (live, then cached).
    expect(
      quotes.some((q) => q.at > upAt + 500 && (q.sources[0] === 'live' || q.sources[0] === 'cache')),
    ).toBe(true);

    // Nothing crashed.
    for (const p of [gw, ...procs]) expect(p.child.exitCode).toBeNull();
  }, 90_000);
});
