/**
 * Issue 46, item 2: on the signed UCP path the platform profile is fetched to find the signing
 * key before the signature is checked, so anyone could make the server connect where they like
 * and read what went wrong. The fetch is bounded (docs/ucp.md, "Fetches before authentication"):
 * port 443 only unless configured, a per-source and process budget, failures kept briefly, and
 * one generic 424 to the caller with the detail in the log. Hostile peers are real local TCP
 * servers (one that resets, one that never answers), so what the server does is what it does.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GENERIC_UNREACHABLE, profileFetcher } from '../../gateway/agent/ucp/platform-profile.ts';
import { fetchBudget } from '../../gateway/agent/ucp/profile-budget.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock, systemClock } from '../../lib/clock.ts';
import { FIXTURE } from './checkout.suite.ts';
import { type Signed, ucpSigner } from './support/sign.ts';

/** A TCP peer on loopback: `reset` closes each connection at once, `hold` never answers. */
async function peer(mode: 'reset' | 'hold') {
  const sockets: Socket[] = [];
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.push(socket);
    socket.on('error', () => {});
    if (mode === 'reset') socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path: string) => `https://127.0.0.1:${port}${path}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A platform signing with a key of its own; the profile it names never lists it (it is never fetched whole). */
function signer(sys: () => TestSystem): (profile: string) => ReturnType<Signed> {
  const signed = ucpSigner({
    base: () => sys().url,
    profileUrl: () => 'unused',
    key: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    kid: 'probe-1',
  });
  return (profile) =>
    signed(
      'POST',
      '/checkout-sessions',
      { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
      { profile },
    );
}

describe('the probe of a default system (no settings)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys?.close());

  it('refuses a profile URL on another port than 443 as 400 invalid_profile_url, fetching nothing', async () => {
    const send = signer(() => sys);
    const r = await send('https://platform.example:22/p.json');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_profile_url' });
    expect(String(r.body.content)).toMatch(/port 22/);
  });

  it("refuses the probe's dummy signature (:AAAA:) before any fetch: 401 signature_invalid", async () => {
    const body = JSON.stringify({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] });
    const { createHash } = await import('node:crypto');
    const res = await fetch(`${sys.url}/ucp/checkout-sessions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ucp-agent': 'profile="https://platform.example/p.json"',
        'idempotency-key': 'probe-1',
        'content-digest': `sha-256=:${createHash('sha256').update(body).digest('base64')}:`,
        'signature-input':
          'sig=("@method" "@authority" "@path" "ucp-agent" "idempotency-key" "content-digest" "content-type");keyid="k";created=' +
          Math.floor(Date.now() / 1000),
        signature: 'sig=:AAAA:',
      },
      body,
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'signature_invalid' });
  });
});

describe('signed calls whose profile fetch fails, on a system with a small budget', () => {
  let sys: TestSystem;
  let reset: Awaited<ReturnType<typeof peer>>;
  let hold: Awaited<ReturnType<typeof peer>>;
  const BUDGET = 4;
  beforeAll(async () => {
    reset = await peer('reset');
    hold = await peer('hold');
    closers.push(reset.close, hold.close);
    // Insecure profiles (http(s) on loopback, any port) so the hostile peers can be local.
    sys = await startEmbedded({
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      UCP_PROFILE_TIMEOUT_MS: '300',
      UCP_PROFILE_FETCH_BUDGET_PER_SOURCE: String(BUDGET),
      UCP_PROFILE_FETCH_BUDGET_GLOBAL: '1000',
    });
  });
  afterAll(() => sys?.close());
  const send = signer(() => sys);

  it('answers every failure with one generic 424, whatever the peer did, within the fetch timeout', async () => {
    for (const url of [reset.url('/a.json'), hold.url('/a.json')]) {
      const started = performance.now();
      const r = await send(url);
      expect(performance.now() - started).toBeLessThan(3000);
      expect([r.status, r.body]).toEqual([
        424,
        { code: 'profile_unreachable', content: GENERIC_UNREACHABLE },
      ]);
    }
    expect([reset.connections(), hold.connections()]).toEqual([1, 1]);
  });

  it('keeps a failure briefly: the same URL again is not fetched again', async () => {
    const r = await send(reset.url('/a.json'));
    expect([r.status, r.body.code]).toEqual([424, 'profile_unreachable']);
    expect(reset.connections()).toBe(1);
  });

  it('stops fetching for a source past its budget: 429 rate_limited with Retry-After, no connection', async () => {
    // Two of the four fetches are spent above; two more distinct URLs use the rest.
    for (const path of ['/b.json', '/c.json']) expect((await send(reset.url(path))).status).toBe(424);
    expect(reset.connections()).toBe(3);
    const over = await send(reset.url('/d.json'));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(reset.connections()).toBe(3);
  });
});

describe('the fetch budget for callers not yet authenticated', () => {
  let hold: Awaited<ReturnType<typeof peer>>;
  afterEach(async () => {
    await hold?.close();
  });

  it('holds at most the allowed fetches in flight; the rest are refused at once', async () => {
    hold = await peer('hold');
    const fetcher = profileFetcher({
      clock: systemClock,
      ttlMs: 60_000,
      maxEntries: 100,
      timeoutMs: 400,
      allowInsecure: true,
      budget: fetchBudget({
        clock: systemClock,
        perSourcePerMinute: 100,
        globalPerMinute: 100,
        concurrency: 2,
      }),
    });
    closers.push(() => fetcher.close());
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        fetcher.resolve(hold.url(`/p${i}.json`), { authenticated: false, source: '198.51.100.7' }),
      ),
    );
    expect(results.map((r) => (r.ok ? 200 : r.status)).sort()).toEqual([424, 424, 429, 429, 429, 429]);
    expect(hold.connections()).toBe(2);
    // An authenticated caller (an API key bound to the profile) is not held to it.
    expect(await fetcher.resolve(hold.url('/keyed.json'))).toMatchObject({ ok: false, status: 424 });
    expect(hold.connections()).toBe(3);
  });

  it('counts per source and for the process, refilled over a minute (pure, manual clock)', () => {
    const clock = new ManualClock();
    const budget = fetchBudget({ clock, perSourcePerMinute: 2, globalPerMinute: 3, concurrency: 10 });
    const admit = (source: string) => {
      const a = budget.admit(source);
      if (a.ok) a.done();
      return a.ok ? 'ok' : a.why;
    };
    expect([admit('a'), admit('a'), admit('a')]).toEqual(['ok', 'ok', 'source']);
    expect([admit('b'), admit('c')]).toEqual(['ok', 'process']);
    clock.advance(30_000);
    expect([admit('a'), admit('a')]).toEqual(['ok', 'source']);
  });
});
