/**
 * Ready means warm (issue 29): a starting embedded system answers /readyz 503 `warming up`
 * until it has sent itself the hot read paths for WARM_UP_MS, then ready; every warm-up request
 * is a real one that answers 2xx on the real catalog, and /healthz answers throughout.
 */
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { warmUp } from '../../gateway/warm-up.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { sendUntil } from '../../lib/http/warm-up.ts';

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
    // Three paths in turn: at least one round of each.
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
      // Inject opens no connection; two workers open two (kept alive), not one per request.
      expect(connections).toBe(2);
    } finally {
      sys.app.server.off('connection', count);
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
});
