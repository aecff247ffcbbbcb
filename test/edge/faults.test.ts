/**
 * Fault tests of the distributed topology: real processes (pricing, promotions, gateway) on
 * Postgres and Redis. The pricing process is stopped, the promotions process killed, Redis shut
 * down during a quote: the quote degrades (sources last_known / static, no discounts) and is
 * never a 5xx while a static price exists.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { gql } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { loadConfig } from '../../lib/config.ts';
import { type Cart, getQuote, PATIENT, tenLines, verify } from './support.ts';

const run = promisify(execFile);
const lines = tenLines().map(({ sku, quantity }) => ({ sku, quantity }));
const cartOf = (ls: Cart['lines']): Cart => ({ lines: ls, currency: 'USD', region: 'EU' });

const GQL_QUOTE = `query Quote($input: CartQuoteInput!) {
  cartQuote(input: $input) {
    subtotal
    lines { sku unitPrice basePrice appliedModifiers source }
    promotions { discountTotal total }
    quoteToken
  }
}`;

interface GqlQuote {
  cartQuote: {
    subtotal: number;
    lines: {
      sku: string;
      unitPrice: number;
      basePrice: number;
      appliedModifiers: string[];
      source: string;
    }[];
    promotions: { discountTotal: number; total: number };
    quoteToken: string;
  };
}

async function graphqlQuote(url: string, cart: Cart) {
  const res = await gql(url, GQL_QUOTE, { variables: { input: cart } });
  return {
    status: res.status,
    errors: res.errors,
    quote: (res.data as unknown as GqlQuote | null)?.cartQuote,
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** pricing + promotions + distributed gateway sharing one Postgres schema and one Redis. */
async function startDistributed(redisUrl: string, extra: Record<string, string> = {}) {
  const pg = await freshPostgres('edge');
  const prefix = uniquePrefix('edge');
  const common = {
    ...PATIENT,
    DATABASE_URL: pg.url,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    CATALOG_SIZE: '500',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-edge-faults-')),
    ...extra,
  };
  const pricing = await startProcess('pricing', common);
  const promotions = await startProcess('promotions', common);
  const gateway = await startProcess('gateway', {
    ...common,
    TOPOLOGY: 'distributed',
    PRICING_URL: pricing.url,
    PROMOTIONS_URL: promotions.url,
  });
  const procs: ServiceProcess[] = [gateway, pricing, promotions];
  return {
    pricing,
    promotions,
    gateway,
    prefix,
    /** Payment's caller token, signed with the development key all processes share (DATA_DIR). */
    payment: () => mintDevToken(loadConfig(common), { subject: 'payment', roles: ['quotes:verify'] }),
    async stop() {
      await Promise.all(procs.map((p) => p.kill()));
      await pg.drop();
    },
  };
}

describe('distributed quote when pricing and promotions go down', () => {
  let sys: Awaited<ReturnType<typeof startDistributed>>;
  const redis = new Redis(TEST_REDIS_URL);
  beforeAll(async () => {
    // Deleting the shared entries below stands for their expiry after 60 s. The near cache in
    // front of Redis (pricing/cache/near.ts) would rightly keep serving its copies until then,
    // so this system runs without it; the Redis-cut test below runs with it.
    sys = await startDistributed(TEST_REDIS_URL, { PRICE_CACHE_MAX_ENTRIES: '0' });
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
    redis.disconnect();
  });

  it('reads the shared cache, then with pricing stopped answers 200 from last-known and static prices', async () => {
    const priced = lines.slice(0, 5);
    const first = await getQuote(sys.gateway.url, cartOf(priced));
    expect(first.status).toBe(200);
    expect(first.body.lines.map((l) => l.source)).toEqual(Array(5).fill('live'));
    const second = await getQuote(sys.gateway.url, cartOf(priced));
    expect(second.body.lines.map((l) => l.source)).toEqual(Array(5).fill('cache'));

    // The fresh entries expire (as after 60 s); the last-known prices stay.
    for (const l of priced) await redis.del(`${sys.prefix}price:{${l.sku}}`);
    await sys.pricing.stop();

    const degraded = await getQuote(sys.gateway.url, cartOf(lines));
    expect(degraded.status).toBe(200);
    expect(degraded.body.lines.map((l) => l.source)).toEqual([
      ...Array(5).fill('last_known'),
      ...Array(5).fill('static'),
    ]);
    expect(degraded.body.lines.slice(0, 5).map((l) => l.unitPrice)).toEqual(
      first.body.lines.map((l) => l.unitPrice),
    );
    for (const l of degraded.body.lines.slice(5)) {
      expect(l.unitPrice).toBe(l.basePrice);
      expect(l.appliedModifiers).toEqual([]);
    }
    expect(degraded.body.degraded).toBe(true);
    expect(degraded.body.promotions.status).toBe('evaluated');
    expect(degraded.body.quoteToken.split('.')).toHaveLength(3);

    // The GraphQL quote degrades the same way: the plan's pricing fetch falls back to the edge.
    const viaGraphql = await graphqlQuote(sys.gateway.url, cartOf(lines));
    expect(viaGraphql.status).toBe(200);
    expect(viaGraphql.errors).toBeUndefined();
    expect(viaGraphql.quote?.lines.map((l) => l.source)).toEqual([
      ...Array(5).fill('LAST_KNOWN'),
      ...Array(5).fill('STATIC'),
    ]);
    expect(viaGraphql.quote?.lines.map((l) => l.unitPrice)).toEqual(
      degraded.body.lines.map((l) => l.unitPrice),
    );
    expect(viaGraphql.quote?.promotions.total).toBe(degraded.body.total);
    // Signed by the promotions process, checked by the gateway: one shared key file.
    const checked = await verify(
      sys.gateway.url,
      await sys.payment(),
      viaGraphql.quote?.quoteToken ?? '',
      cartOf(lines),
    );
    expect(checked.body.valid).toBe(true);
    const claimed = (checked.body.claims as { lines: { source: string }[] }).lines.map((l) => l.source);
    expect(claimed).toEqual([...Array(5).fill('last_known'), ...Array(5).fill('static')]);
  });

  it('with promotions killed too, answers 200 without discounts, marked unavailable', async () => {
    await sys.promotions.kill();
    const res = await getQuote(sys.gateway.url, cartOf(lines));
    expect(res.status).toBe(200);
    expect(res.body.promotions).toMatchObject({ status: 'unavailable', applied: [] });
    expect(res.body.discountTotal).toBe(0);
    expect(res.body.total).toBe(res.body.subtotal);
  });
});

describe('distributed quote when Redis is cut', () => {
  let sys: Awaited<ReturnType<typeof startDistributed>>;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    await run('redis-server', [
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
    ]);
    for (let i = 0; i < 50; i++) {
      const pong = await run('redis-cli', ['-p', String(port), 'ping']).catch(() => ({ stdout: '' }));
      if (pong.stdout.trim() === 'PONG') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Without Redis, pricing hangs on its cache until ioredis gives up: any answer but live is
    // static here, so the edge need not wait long for it.
    sys = await startDistributed(`redis://127.0.0.1:${port}`, { PRICING_TIMEOUT_MS: '500' });
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
    await run('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined);
  });

  it('keeps answering 200 while Redis goes away during a quote and after', async () => {
    const before = await getQuote(sys.gateway.url, cartOf(lines));
    expect(before.status).toBe(200);
    const [during] = await Promise.all([
      getQuote(sys.gateway.url, cartOf(lines)),
      run('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined),
    ]);
    expect(during.status).toBe(200);
    // The prices each line was given live (or from the near cache) so far, by line.
    const priced = lines.map(() => new Set<number>());
    const seen = (answer: typeof before) => {
      for (const [i, l] of answer.body.lines.entries())
        if (l.source === 'live' || l.source === 'cache') priced[i]?.add(l.unitPrice);
    };
    seen(before);
    seen(during);
    for (let i = 0; i < 8; i++) {
      const after = await getQuote(sys.gateway.url, cartOf(lines));
      expect(after.status).toBe(200);
      // Nothing can come from Redis now: pricing computes live, the catalog gives its static
      // price, or the near cache serves a copy that is still within its 60 s: a price an earlier
      // answer gave. Unless every earlier answer for that line was static (on a loaded machine
      // pricing can miss the 500 ms): then the copy is the one its late reply left, seen by no one.
      for (const [i, l] of after.body.lines.entries()) {
        expect(['live', 'static', 'cache']).toContain(l.source);
        const earlier = priced[i] ?? new Set<number>();
        if (l.source === 'cache' && earlier.size > 0) expect([...earlier]).toContain(l.unitPrice);
      }
      seen(after);
      expect(after.body.quoteToken.split('.')).toHaveLength(3);
    }
    const viaGraphql = await graphqlQuote(sys.gateway.url, cartOf(lines));
    expect(viaGraphql.status).toBe(200);
    expect(viaGraphql.errors).toBeUndefined();
    for (const l of viaGraphql.quote?.lines ?? []) expect(['LIVE', 'STATIC', 'CACHE']).toContain(l.source);
    expect(viaGraphql.quote?.lines).toHaveLength(10);
  });
});
