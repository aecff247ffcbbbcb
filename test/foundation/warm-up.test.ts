/**
 * Ready means warm (issue 29): a starting embedded system answers /readyz 503 `warming up`
 * until it has sent itself the hot read paths for WARM_UP_MS, then ready; every warm-up request
 * is a real one that answers 2xx on the real catalog, and /healthz answers throughout.
 */
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { warmUp } from '../../gateway/warm-up.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { loadConfig } from '../../lib/config.ts';
import { REHEARSAL_HEADER } from '../../lib/http/rehearsal.ts';
import { atLeastOf, sendUntil } from '../../lib/http/warm-up.ts';
import { priceCalculateWarmUp } from '../../subgraphs/pricing/warm-up.ts';

let sys: TestSystem | undefined;
afterAll(() => sys?.close());

describe('the warm-up before ready', () => {
  it('keeps /readyz at 503 while it runs, then ready; /healthz answers throughout', async () => {
    const started = performance.now();
    sys = await startEmbedded({ WARM_UP_MS: '3000' });
    const first = await fetch(`${sys.url}/readyz`);
    expect(first.status).toBe(503);
    expect(((await first.json()) as { checks: Record<string, string> }).checks['warm-up']).toBe('warming up');
    expect((await fetch(`${sys.url}/healthz`)).status).toBe(200);
    let ready: Response;
    for (;;) {
      ready = await fetch(`${sys.url}/readyz`);
      if (ready.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(((await ready.json()) as { checks: Record<string, string> }).checks['warm-up']).toBe('ok');
    // Ready no sooner than the budget after the start of listening.
    expect(performance.now() - started).toBeGreaterThanOrEqual(3000);
  });

  it('sends the quote and price paths, each answering 2xx, until its budget is spent', async () => {
    if (!sys) throw new Error('no system');
    const r = await warmUp(sys.app, sys.platform, { budgetMs: 300, concurrency: 2 });
    expect(r.failed).toBe(0);
    // Each kind in its lane: at least one request of each.
    expect(r.requests).toBeGreaterThanOrEqual(3);
    expect(r.ms).toBeGreaterThanOrEqual(300);
    const none = await warmUp(sys.app, sys.platform, { budgetMs: 0 });
    expect(none.requests).toBe(0);
  });

  it('sends them over its own loopback socket once it listens, so the socket paths warm too', async () => {
    if (!sys) throw new Error('no system');
    let connections = 0;
    const count = () => connections++;
    sys.app.server.on('connection', count);
    try {
      const r = await warmUp(sys.app, sys.platform, { budgetMs: 300, concurrency: 2 });
      expect(r.failed).toBe(0);
      expect(r.requests).toBeGreaterThanOrEqual(3);
      // Inject opens no connection; each of the six kinds (REST and GraphQL quotes, price, order,
      // ACP and UCP checkouts) has its lane and its kept-alive connection, not one per request.
      expect(connections).toBe(6);
    } finally {
      sys.app.server.off('connection', count);
    }
  });

  it('gives each kind its own lane: a cheap route runs many times beside a slow one', async () => {
    const app = Fastify();
    const seen = { fast: 0, slow: 0 };
    app.get('/fast', async () => {
      seen.fast++;
      return { ok: true };
    });
    app.get('/slow', async () => {
      seen.slow++;
      await new Promise((r) => setTimeout(r, 50));
      return { ok: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const r = await sendUntil(
        app,
        [() => ({ method: 'GET', url: '/slow' }), () => ({ method: 'GET', url: '/fast' })],
        { deadline: performance.now() + 600, concurrency: 2 },
      );
      expect(r.failed).toBe(0);
      expect(r.requests).toBe(seen.fast + seen.slow);
      // One lane each: the slow one about 12 times in 600 ms, the fast one as often as it can.
      // Taken in turn from one queue, both were sent about as often as the slow one allows.
      expect(seen.slow).toBeGreaterThanOrEqual(5);
      expect(seen.fast).toBeGreaterThan(10 * seen.slow);
    } finally {
      await app.close();
    }
  });

  it('sends a request made from n in all its forms: the price in both regions beside another kind', async () => {
    const app = Fastify();
    const regions = new Set<string>();
    app.get('/ping', async () => ({ ok: true }));
    app.post('/v1/prices/calculate', async (req) => {
      regions.add((req.body as { region: string }).region);
      return { ok: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const r = await sendUntil(
        app,
        [() => ({ method: 'GET', url: '/ping' }), priceCalculateWarmUp(['SKU-ABC-000001', 'SKU-ABC-000002'])],
        { deadline: performance.now() + 300, concurrency: 2 },
      );
      expect(r.failed).toBe(0);
      // With one counter for both kinds, in step, the price (the second) only ever had odd n: EU.
      expect([...regions].sort()).toEqual(['EU', 'US']);
    } finally {
      await app.close();
    }
  });

  it('warms by inject where the app does not listen (within 1 s)', async () => {
    const app = Fastify();
    app.get('/ping', async () => ({ ok: true }));
    await app.ready();
    try {
      const started = performance.now();
      const r = await sendUntil(app, [() => ({ method: 'GET', url: '/ping' })], {
        deadline: started + 1500,
        concurrency: 2,
      });
      expect(r.failed).toBe(0);
      expect(r.requests).toBeGreaterThan(10);
      expect(app.server.listening).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('sends quotes and prices as a caller does, without the rehearsal token; rehearsals carry it', async () => {
    if (!sys) throw new Error('no system');
    const seen: { url: string; token: boolean }[] = [];
    const record = (req: { url?: string; headers: Record<string, unknown> }) =>
      seen.push({ url: req.url ?? '', token: REHEARSAL_HEADER in req.headers });
    sys.app.server.on('request', record);
    try {
      const r = await warmUp(sys.app, sys.platform, { budgetMs: 600, concurrency: 2 });
      expect(r.failed).toBe(0);
    } finally {
      sys.app.server.off('request', record);
    }
    const reads = seen.filter((s) => /^\/(cart\/quote|graphql|v1\/prices)/.test(s.url));
    const rehearsed = seen.filter((s) => /orders|checkout/.test(s.url));
    expect(reads.length).toBeGreaterThan(0);
    expect(rehearsed.length).toBeGreaterThan(0);
    expect(reads.filter((s) => s.token)).toEqual([]);
    expect(rehearsed.filter((s) => !s.token)).toEqual([]);
  });
});

describe('the least work of a warm-up (WARM_UP_REQUESTS, WARM_UP_MAX_MS)', () => {
  const ping = async <T>(fn: (app: ReturnType<typeof Fastify>) => Promise<T>): Promise<T> => {
    const app = Fastify();
    app.get('/ping', async () => ({ ok: true }));
    await app.ready();
    try {
      return await fn(app);
    } finally {
      await app.close();
    }
  };

  it.each([
    // [floor of requests, its limit in ms, least requests sent, the longest it may take in ms]
    [200, 10_000, 200, 5_000],
    [1_000_000_000, 400, 1, 3_000],
  ])(
    'goes on past its time until %i requests were answered, but not past %i ms',
    async (requests, untilMs, least, longest) => {
      const r = await ping(async (app) => {
        const started = performance.now();
        const sent = await sendUntil(app, [() => ({ method: 'GET', url: '/ping' })], {
          deadline: started,
          concurrency: 2,
          atLeast: { requests, until: started + untilMs },
        });
        return { ...sent, ms: performance.now() - started };
      });
      expect(r.failed).toBe(0);
      expect(r.requests).toBeGreaterThanOrEqual(least);
      expect(r.ms).toBeLessThan(longest);
      // Past the deadline only while the floor is not met: at most one more request per worker.
      if (requests < 1_000_000) expect(r.requests).toBeLessThanOrEqual(requests + 2);
      else expect(r.ms).toBeGreaterThanOrEqual(untilMs);
    },
  );

  it('without a floor stops at its deadline', async () => {
    const r = await ping((app) =>
      sendUntil(app, [() => ({ method: 'GET', url: '/ping' })], {
        deadline: performance.now(),
        concurrency: 2,
      }),
    );
    expect(r.requests).toBe(0);
  });

  it.each([
    [{}, undefined],
    [{ WARM_UP_REQUESTS: '1000' }, { requests: 1000, until: 8000 }],
    [
      { WARM_UP_REQUESTS: '50', WARM_UP_MAX_MS: '300' },
      { requests: 50, until: 300 },
    ],
    [{ WARM_UP_REQUESTS: '0' }, undefined],
  ])('takes its floor from the configuration (%o)', (env, expected) => {
    expect(atLeastOf(loadConfig(env), 0).atLeast).toEqual(expected);
  });

  it.each([['-1'], ['1.5'], ['ten']])('refuses WARM_UP_REQUESTS=%s, naming it', (bad) => {
    expect(() => loadConfig({ WARM_UP_REQUESTS: bad })).toThrow(/WARM_UP_REQUESTS/);
  });
});
