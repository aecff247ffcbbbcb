/**
 * `kill -9` of the procurement process in the middle of a stream of orders (distributed
 * topology: gateway and procurement as separate processes, Postgres and Redis real). Clients
 * send Idempotency-Keys and retry on 503 like a careful agent. Promise: every acknowledged
 * order exists exactly once, with the amount sent; every stored order was acknowledged to its
 * client (no order exists that nobody was told about); while procurement is dead the gateway
 * answers 503 with Retry-After, never a 5xx of another kind; a new procurement process on the
 * same address is used without restarting the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../../harness/processes.ts';
import { freshPostgres } from '../../harness/services.ts';
import { budgetOracle } from '../procurement/support/decimal-oracle.ts';
import { figures, orderStream } from './support/order-stream.ts';
import { gatewayEnv, portOf, start, stopAll, storedOrders, topologyEnv } from './support/topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let store: Awaited<ReturnType<typeof freshPostgres>>;
let env: Record<string, string>;
let procurement: ServiceProcess | undefined;
let gateway: ServiceProcess | undefined;

beforeAll(async () => {
  store = await freshPostgres('faults_kill');
  env = topologyEnv(store.url, 'kill');
  procurement = await start('procurement', env);
  gateway = await start('gateway', gatewayEnv(env, procurement.url));
}, 120_000);

afterAll(async () => {
  await stopAll(gateway, procurement);
  await store?.drop();
});

describe('kill -9 of the procurement process under a stream of orders', () => {
  it('acknowledges every order exactly once, stores nothing unacknowledged, answers 503 + Retry-After while it is dead', async () => {
    const first = procurement as ServiceProcess;
    const gw = gateway as ServiceProcess;
    let killedAt = 0;
    let restartedAt = 0;
    const fault = (async () => {
      await sleep(1500);
      killedAt = Date.now();
      await first.kill();
      await sleep(1000);
      // Same address: the gateway's PROCUREMENT_URL does not change, nor does the gateway.
      procurement = await start('procurement', { ...env, PORT: portOf(first.url) });
      restartedAt = Date.now();
      await sleep(1500);
    })();
    const run = await orderStream({
      urls: () => [gw.url],
      clients: 6,
      until: fault,
      drainMs: 15_000,
      pauseMs: 5,
    });

    const stored = await storedOrders(store.url);
    const f = figures(run, new Map([...stored].map(([id, s]) => [id, s.rows])));
    console.log(`kill -9 procurement: ${JSON.stringify(f)}`);

    // What clients were told.
    const statuses = new Set(run.attempts.map((a) => a.status));
    expect(
      [...statuses].every((s) => s === 201 || s === 503),
      JSON.stringify(f.byStatus),
    ).toBe(true);
    for (const a of run.attempts) if (a.status === 503) expect(a.retryAfter).toMatch(/^\d+$/);
    expect(run.attempts.some((a) => a.status === 503 && a.at > killedAt && a.at < restartedAt)).toBe(true);
    expect(run.attempts.some((a) => a.status === 201 && a.at > restartedAt)).toBe(true);
    expect(gw.child.exitCode).toBeNull();

    // Every order acknowledged, exactly once, with the amount sent.
    expect(f.acknowledged).toBe(f.ordersSent);
    expect(f.acknowledgedNotStored).toBe(0);
    expect(f.duplicated).toBe(0);
    for (const o of run.orders)
      expect(stored.get(o.orderId as string)?.budget).toBe(budgetOracle(o.budget).canonical);
    // Nothing stored that no client was told about.
    const told = new Set(run.orders.map((o) => o.orderId));
    expect([...stored.keys()].filter((id) => !told.has(id))).toEqual([]);
    expect(f.stored).toBe(f.acknowledged);
  }, 90_000);
});
