/**
 * Postgres crashes and comes back under a stream of orders (distributed topology: gateway and
 * procurement processes on a throwaway cluster made by initdb/pg_ctl, never the shared
 * server). Promise: while the database is down orders get 503 with Retry-After, never a 201
 * without a stored row, never another 5xx; once it is back, orders succeed again without
 * restarting any of our processes; every acknowledged order exists exactly once, and nothing
 * is stored that no client was told about.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../../harness/processes.ts';
import { budgetOracle } from '../procurement/support/decimal-oracle.ts';
import { figures, orderStream } from './support/order-stream.ts';
import { type PostgresCluster, throwawayPostgres } from './support/postgres-cluster.ts';
import { gatewayEnv, start, stopAll, storedOrders, topologyEnv } from './support/topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: PostgresCluster | undefined;
let procurement: ServiceProcess | undefined;
let gateway: ServiceProcess | undefined;

beforeAll(async () => {
  cluster = await throwawayPostgres();
  const env = topologyEnv(cluster.url, 'pgrestart');
  procurement = await start('procurement', env);
  gateway = await start('gateway', gatewayEnv(env, procurement.url));
}, 120_000);

afterAll(async () => {
  await stopAll(gateway, procurement);
  await cluster?.remove();
});

describe('Postgres restarted under a stream of orders', () => {
  it('answers 503 + Retry-After while it is down, recovers by itself, and stores each acknowledged order once', async () => {
    const db = cluster as PostgresCluster;
    const gw = gateway as ServiceProcess;
    const pc = procurement as ServiceProcess;
    let downAt = 0;
    let startingAt = 0;
    let upAt = 0;
    const fault = (async () => {
      await sleep(1500);
      // A crash: no shutdown checkpoint, WAL recovery on start, connections cut mid-query.
      await db.stop('immediate');
      downAt = Date.now();
      await sleep(2000);
      // The server cannot accept before this; pg_ctl returns a little after it does.
      startingAt = Date.now();
      await db.start();
      upAt = Date.now();
      await sleep(2000);
    })();
    const run = await orderStream({
      urls: () => [gw.url],
      clients: 6,
      until: fault,
      drainMs: 15_000,
      pauseMs: 5,
    });

    const stored = await storedOrders(db.url);
    const f = figures(run, new Map([...stored].map(([id, s]) => [id, s.rows])));
    console.log(`postgres restart: ${JSON.stringify(f)}`);
    if (process.env.FAULT_DEBUG) {
      console.log(run.attempts.filter((a) => a.status === 0).slice(0, 3));
      console.log('GATEWAY', gw.child.exitCode, gw.output().slice(-3000));
      console.log('PROCUREMENT', pc.child.exitCode, pc.output().slice(-3000));
    }

    expect(
      run.attempts.every((a) => a.status === 201 || a.status === 503),
      JSON.stringify(f.byStatus),
    ).toBe(true);
    for (const a of run.attempts) if (a.status === 503) expect(a.retryAfter).toMatch(/^\d+$/);
    // Down: refused. A 201 answered while the server was down would be an order without a row.
    const whileDown = run.attempts.filter((a) => a.at > downAt + 200 && a.at < startingAt);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((a) => a.status === 201)).toEqual([]);
    // Back: accepted again, by the same processes.
    expect(run.attempts.some((a) => a.status === 201 && a.at > upAt)).toBe(true);
    expect(gw.child.exitCode).toBeNull();
    expect(pc.child.exitCode).toBeNull();

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
