import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { loadConfig } from '../../lib/config.ts';
import { createRedis } from '../../lib/redis.ts';
import { eventually } from './support.ts';

/**
 * Two pricing processes of the distributed topology sharing one Redis and one PostgreSQL: a base
 * price changed through one is served by the other at once, and the other consumed the event.
 */
describe('base price change across two pricing processes (real Redis and PostgreSQL)', () => {
  const prefix = uniquePrefix('pricing-x');
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-pricing-x-'));
  const secret = 'cross-process-test-secret';
  let pg: Awaited<ReturnType<typeof freshPostgres>>;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    pg = await freshPostgres('pricing_x');
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      DATABASE_URL: pg.url,
      DATA_DIR: dataDir,
      CATALOG_SIZE: '200',
      GATEWAY_SHARED_SECRET: secret,
    };
    // One first, so the other finds the catalog migrated and seeded (as a rolling start does).
    a = await startProcess('pricing', env);
    b = await startProcess('pricing', env);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await pg?.drop();
    const r = createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false });
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  });

  const context = {
    sku: 'SKU-ABC-000001',
    currency: 'USD',
    region: 'x-proc',
    customerSegment: 'VIP',
    inventoryLevel: 300,
  };
  const price = async (p: ServiceProcess) => {
    const res = await fetch(`${p.url}/v1/prices/calculate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(context),
    });
    expect(res.status).toBe(200);
    return {
      cache: res.headers.get('x-cache'),
      body: (await res.json()) as { basePrice: number; dynamicPrice: number },
    };
  };
  const invalidations = async (p: ServiceProcess) => {
    const text = await (await fetch(`${p.url}/metrics`)).text();
    return Number(/^pricing_cache_invalidations (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };

  it('shares the cache: a price computed by one process is a HIT in the other', async () => {
    const first = await price(b);
    expect(first.cache).toBe('MISS');
    expect(first.body).toMatchObject({ basePrice: 19.99, dynamicPrice: 18.99 });
    expect((await price(a)).cache).toBe('HIT');
    expect((await price(b)).cache).toBe('HIT');
  });

  it('serves a base price changed through the other process immediately, and drops it on the event', async () => {
    const before = await invalidations(b);
    const token = await mintDevToken(loadConfig({ DATA_DIR: dataDir }), {
      subject: 'ops',
      roles: ['pricing:admin'],
    });
    const res = await fetch(`${a.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'x-gateway-secret': secret,
      },
      body: JSON.stringify({
        query:
          'mutation { setBasePrice(input: { sku: "SKU-ABC-000001", currency: "USD", amount: 30 }) { amount } }',
      }),
    });
    const body = (await res.json()) as { data?: { setBasePrice: { amount: number } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.setBasePrice.amount).toBe(30);

    // No waiting: the very next request to the other process is a MISS at the new price.
    const next = await price(b);
    expect(next.cache).toBe('MISS');
    expect(next.body).toMatchObject({ basePrice: 30, dynamicPrice: 28.5 });
    expect((await price(a)).cache).toBe('HIT');
    // And the other process consumed BasePriceChanged from the stream.
    await eventually(async () => expect(await invalidations(b)).toBeGreaterThan(before));
  });
});
