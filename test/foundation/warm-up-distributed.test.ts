/**
 * Ready means warm in the distributed topology too (issue 29): each subgraph process and each
 * gateway answers /readyz 503 `warming up` once listening, until it has opened its SQL pool and
 * Redis and sent itself its hot read paths for WARM_UP_MS; then 200. Every warm-up request is a
 * real one that answers 2xx (the processes log how many they sent and how many failed).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';

const procs: ServiceProcess[] = [];
let dropPg: (() => Promise<void>) | undefined;
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await dropPg?.();
});

/** Long enough that the first /readyz after "listening" falls inside it on a loaded machine. */
const WARM_UP_MS = '4000';

async function readyz(url: string): Promise<{ status: number; warmUp?: string }> {
  const res = await fetch(`${url}/readyz`);
  const body = (await res.json()) as { checks: Record<string, string> };
  return { status: res.status, ...(body.checks['warm-up'] ? { warmUp: body.checks['warm-up'] } : {}) };
}

/** Starts a process and checks it is listening but not ready, then waits for ready. */
async function startWarming(
  name: 'pricing' | 'promotions' | 'procurement' | 'gateway',
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const p = await startProcess(name, { ...env, WARM_UP_MS }, 120_000);
  procs.push(p);
  const first = await readyz(p.url);
  if (name === 'procurement') {
    // It only opens its connections (no hot read path to send: orders are purchases), which
    // the compiled process can finish before this first look; it must then say why it is ready.
    if (first.status === 200) {
      expect(first.warmUp, name).toBe('ok');
      return p;
    }
  }
  expect(first, name).toEqual({ status: 503, warmUp: 'warming up' });
  expect((await fetch(`${p.url}/healthz`)).status, name).toBe(200);
  for (;;) {
    const r = await readyz(p.url);
    if (r.status === 200) {
      expect(r.warmUp, name).toBe('ok');
      return p;
    }
    expect(r, name).toEqual({ status: 503, warmUp: 'warming up' });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The process's `warmed up` log line. */
function warmedUp(p: ServiceProcess): { requests: number; failed: number; failures?: string[] } {
  const line = p
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"warmed up"'));
  if (!line) throw new Error(`no "warmed up" line in:\n${p.output()}`);
  return JSON.parse(line) as { requests: number; failed: number };
}

describe('the distributed processes warm up before ready', () => {
  it('holds each subgraph process and the gateway at 503 until warm, every warm-up request 2xx', async () => {
    const pg = await freshPostgres('warm');
    dropPg = pg.drop;
    const env = {
      DATABASE_URL: pg.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('warm'),
      GATEWAY_SHARED_SECRET: 'warm-up-test-secret-0123456789',
      DATA_DIR: (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/ac-warm-`),
      CATALOG_SIZE: '500',
      // Five processes start at once beside the rest of the suite: a Redis command may wait past
      // the production 500 ms on a loaded machine, which is not what this test is about.
      REDIS_COMMAND_TIMEOUT_MS: '5000',
    };
    // Pricing first: it creates and seeds the catalog the others read.
    const pricing = await startWarming('pricing', env);
    const [promotions, procurement] = await Promise.all([
      startWarming('promotions', env),
      startWarming('procurement', env),
    ]);
    const gateway = await startWarming('gateway', {
      ...env,
      TOPOLOGY: 'distributed',
      PRICING_URL: pricing.url,
      PROMOTIONS_URL: promotions.url,
      PROCUREMENT_URL: procurement.url,
    });
    // Pricing and promotions send themselves their hot paths, the gateway its quotes through
    // them; procurement (orders are purchases) only opens its connections.
    for (const p of [pricing, promotions, gateway]) {
      const r = warmedUp(p);
      expect(r.requests).toBeGreaterThan(0);
      expect(r.failures ?? [], p.url).toEqual([]);
      expect(r.failed).toBe(0);
    }
    expect(warmedUp(procurement)).toMatchObject({ requests: 0, failed: 0 });
  }, 240_000);
});
