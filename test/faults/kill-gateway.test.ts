/**
 * `kill -9` of one of two gateway replicas in the middle of a stream of orders (distributed
 * topology, idempotency records in Redis). Clients spread their attempts over the replicas and
 * retry a failed attempt on the one still alive with the same Idempotency-Key. A key the dead
 * replica held in flight is freed after IDEMPOTENCY_IN_FLIGHT_MS (2 s here, 30 s by default),
 * then the retry finds the order that replica may have placed (the order id derives from the
 * key). Promise: every acknowledged order exists exactly once; nothing is stored that no
 * client was told about; answers are 201, 503 or 409 with Retry-After, or the dead replica's
 * closed connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../../harness/processes.ts';
import { freshPostgres } from '../../harness/services.ts';
import { budgetOracle } from '../procurement/support/decimal-oracle.ts';
import { figures, orderStream } from './support/order-stream.ts';
import { gatewayEnv, start, stopAll, storedOrders, topologyEnv } from './support/topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let store: Awaited<ReturnType<typeof freshPostgres>>;
let procurement: ServiceProcess | undefined;
let g1: ServiceProcess | undefined;
let g2: ServiceProcess | undefined;

beforeAll(async () => {
  store = await freshPostgres('faults_gw');
  const env = { ...topologyEnv(store.url, 'killgw'), IDEMPOTENCY_IN_FLIGHT_MS: '2000' };
  procurement = await start('procurement', env);
  const gw = gatewayEnv(env, procurement.url);
  [g1, g2] = await Promise.all([start('gateway', gw), start('gateway', gw)]);
}, 120_000);

afterAll(async () => {
  await stopAll(g1, g2, procurement);
  await store?.drop();
});

describe('kill -9 of a gateway replica under a stream of orders', () => {
  it('acknowledges every order exactly once through the surviving replica', async () => {
    const [a, b] = [g1 as ServiceProcess, g2 as ServiceProcess];
    let alive = [a.url, b.url];
    let killedAt = 0;
    const fault = (async () => {
      await sleep(1500);
      killedAt = Date.now();
      await a.kill();
      alive = [b.url];
      await sleep(2500);
    })();
    const run = await orderStream({
      urls: () => alive,
      clients: 6,
      until: fault,
      drainMs: 15_000,
      pauseMs: 5,
    });

    const stored = await storedOrders(store.url);
    const f = figures(run, new Map([...stored].map(([id, s]) => [id, s.rows])));
    console.log(`kill -9 gateway replica: ${JSON.stringify(f)}`);

    expect(
      run.attempts.every((x) => [0, 201, 409, 503].includes(x.status)),
      JSON.stringify(f.byStatus),
    ).toBe(true);
    for (const x of run.attempts)
      if (x.status === 503 || x.status === 409) expect(x.retryAfter).toMatch(/^\d+$/);
    // Network errors come only from the replica that was killed, around its death.
    for (const x of run.attempts) if (x.status === 0) expect(x.at).toBeGreaterThanOrEqual(killedAt - 50);
    expect(run.attempts.some((x) => x.status === 201 && x.at > killedAt)).toBe(true);
    expect(b.child.exitCode).toBeNull();

    expect(f.acknowledged).toBe(f.ordersSent);
    expect(f.acknowledgedNotStored).toBe(0);
    expect(f.duplicated).toBe(0);
    for (const o of run.orders)
      expect(stored.get(o.orderId as string)?.budget).toBe(budgetOracle(o.budget).canonical);
    const told = new Set(run.orders.map((o) => o.orderId));
    expect([...stored.keys()].filter((id) => !told.has(id))).toEqual([]);
    expect(f.stored).toBe(f.acknowledged);
  }, 90_000);
});
