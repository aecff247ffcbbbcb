/**
 * The platform-profile fetcher as production runs it (UCP_PROFILE_ALLOW_INSECURE off, so the
 * webhook sender's guardedLookup is wired): every other UCP test turns the flag on to serve
 * profiles from loopback. docs/ucp.md, "UCP-Agent and the platform profile": a URL that is not
 * https, or names a loopback/private host, is 400 `invalid_profile_url`; a fetch that fails,
 * a name resolving to a private address included, is 424 `profile_unreachable`.
 */
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { profileFetcher } from '../../gateway/agent/ucp/platform-profile.ts';
import { systemClock } from '../../lib/clock.ts';

const fetcher = (allowInsecure: boolean, ports?: number[]) =>
  profileFetcher({
    clock: systemClock,
    ttlMs: 60_000,
    maxEntries: 10,
    timeoutMs: 2000,
    allowInsecure,
    ...(ports ? { ports } : {}),
  });

// The machine's own name, when it resolves to loopback only (/etc/hosts): a name the URL check
// cannot judge, so only the lookup guard stands between it and the merchant's neighbours. The
// listener below is on 127.0.0.1, so a name that also resolves elsewhere (a container's
// 172.17.x) could miss it without a guard: the test then does not run.
const own = hostname();
const ownIsLoopback = await lookup(own, { all: true }).then(
  (all) => all.length > 0 && all.every((a) => a.address === '127.0.0.1'),
  () => false,
);

/** A TCP listener on loopback that only counts the connections it gets. */
async function listener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((socket) => {
    n++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    connections: () => n,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('the platform profile fetcher with UCP_PROFILE_ALLOW_INSECURE off', () => {
  it.each([
    ['an http URL', 'http://platform.example/profile.json', /must use https/],
    ['a loopback IPv4 literal', 'https://127.0.0.1/profile.json', /loopback or private/],
    ['a private IPv4 literal', 'https://10.1.2.3/profile.json', /loopback or private/],
    ['a link-local (metadata) literal', 'https://169.254.169.254/latest', /loopback or private/],
    ['a loopback IPv6 literal', 'https://[::1]/profile.json', /loopback or private/],
    ['localhost', 'https://localhost/profile.json', /loopback or private/],
  ])('refuses %s as 400 invalid_profile_url, before any fetch', async (_what, url, reason) => {
    const f = fetcher(false);
    closers.push(() => f.close());
    expect(f.check(url)).toMatchObject({ status: 400, code: 'invalid_profile_url' });
    const r = await f.resolve(url);
    expect(r).toMatchObject({ ok: false, status: 400, code: 'invalid_profile_url' });
    expect(r.ok ? '' : r.content).toMatch(reason);
    // The same URL passes the check when insecure profiles are allowed: the flag made the difference.
    expect(fetcher(true).check(url)).toBeUndefined();
  });

  it.skipIf(!ownIsLoopback)(
    'refuses a host name resolving to a private address as 424, without connecting',
    async () => {
      const l = await listener();
      closers.push(l.close);
      const url = `https://${own}:${l.port}/profile.json`;
      // The listener's port is allowed (UCP_PROFILE_PORTS), so the lookup guard alone decides.
      const guarded = fetcher(false, [l.port]);
      closers.push(() => guarded.close());
      // The name is not a literal: the URL check lets it through, the lookup guard must not.
      expect(guarded.check(url)).toBeUndefined();
      const r = await guarded.resolve(url);
      expect(r).toMatchObject({ ok: false, status: 424, code: 'profile_unreachable' });
      expect(r.ok ? '' : r.content).toMatch(/resolves to a private address/);
      expect(l.connections()).toBe(0);
      // Without the guard the same fetch reaches the listener (and fails on TLS): the guard stopped it.
      const open = fetcher(true);
      closers.push(() => open.close());
      expect(await open.resolve(url)).toMatchObject({ ok: false, status: 424 });
      expect(l.connections()).toBe(1);
    },
  );
});
