import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../lib/net/address.ts';
import { checkEndpointUrl } from '../../subgraphs/procurement/webhooks/endpoint-url.ts';
import { backoffCeilingMs, nextRetryDelayMs } from '../../subgraphs/procurement/webhooks/retry-schedule.ts';
import { newSigningSecret } from '../../subgraphs/procurement/webhooks/secret.ts';
import { signatureHeaders } from '../../subgraphs/procurement/webhooks/sender.ts';
import { outcomeOf } from '../../subgraphs/procurement/webhooks/worker.ts';

describe('endpoint URLs', () => {
  const refused: [string, string, RegExp][] = [
    ['not a URL', 'hooks.example.com/x', /absolute URL/],
    ['another scheme', 'ftp://hooks.example.com/x', /http or https/],
    ['a javascript: URL', 'javascript:alert(1)', /http or https/],
    ['a file: URL', 'file:///etc/passwd', /http or https/],
    ['credentials', 'https://user:pw@hooks.example.com/x', /credentials/],
    ['a user name alone', 'https://user@hooks.example.com/x', /credentials/],
    ['a fragment', 'https://hooks.example.com/x#frag', /fragment/],
    ['an empty fragment', 'https://hooks.example.com/x#', /fragment/],
    ['loopback', 'http://127.0.0.1:9000/x', /private/],
    ['loopback elsewhere in 127/8', 'http://127.8.9.10/x', /private/],
    ['localhost', 'http://localhost:9000/x', /private/],
    ['a .localhost name', 'http://api.localhost/x', /private/],
    ['IPv6 loopback', 'http://[::1]:9000/x', /private/],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/x', /private/],
    ['a private network', 'https://10.1.2.3/x', /private/],
    ['another private network', 'https://192.168.1.1/x', /private/],
    ['cloud metadata (link-local)', 'http://169.254.169.254/latest/meta-data', /private/],
    ['unspecified', 'http://0.0.0.0/x', /private/],
    ['IPv6 unique-local', 'https://[fd00::1]/x', /private/],
    ['decimal-encoded loopback', 'http://2130706433/x', /private/],
    ['too long', `https://hooks.example.com/${'a'.repeat(2048)}`, /longer than/],
  ];
  it.each(refused)('refuses %s', (_, url, reason) => {
    const r = checkEndpointUrl(url, false);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toMatch(reason);
  });

  it.each([
    ['https://hooks.example.com/orders', 'https://hooks.example.com/orders'],
    ['http://hooks.example.com:8443/a?b=c', 'http://hooks.example.com:8443/a?b=c'],
    ['HTTPS://Hooks.Example.COM', 'https://hooks.example.com/'],
    ['https://93.184.215.14/x', 'https://93.184.215.14/x'],
  ])('accepts %s as %s', (url, normalised) => {
    expect(checkEndpointUrl(url, false)).toEqual({ ok: true, url: normalised });
  });

  it('accepts loopback and private addresses when configured to (tests, development)', () => {
    expect(checkEndpointUrl('http://127.0.0.1:9000/x', true).ok).toBe(true);
    expect(checkEndpointUrl('http://localhost:9000/x', true).ok).toBe(true);
    // The rest of the rules still hold.
    expect(checkEndpointUrl('http://u:p@127.0.0.1/x', true).ok).toBe(false);
  });

  it('never throws, and an accepted URL is http(s) without credentials or fragment (fuzz)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.webUrl({ withFragments: true, withQueryParameters: true })),
        fc.boolean(),
        (raw, allow) => {
          const r = checkEndpointUrl(raw, allow);
          if (!r.ok) return typeof r.reason === 'string' && r.reason.length > 0;
          const u = new URL(r.url);
          return (
            /^https?:$/.test(u.protocol) && !u.username && !u.password && !u.hash && r.url.length <= 2048 + 1
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each([
    ['8.8.8.8', false],
    ['2606:4700:4700::1111', false],
    ['127.0.0.1', true],
    ['::1', true],
    ['::ffff:10.0.0.1', true],
    ['fe80::1', true],
    ['100.64.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
  ])('judges %s private: %s', (ip, expected) => {
    expect(isPrivateAddress(ip)).toBe(expected);
  });
});

describe('the retry schedule', () => {
  const policy = { maxAttempts: 8, baseMs: 15 * 60_000, maxDelayMs: 8 * 3_600_000 };

  it('doubles the ceiling per attempt up to the cap: the documented default schedule', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => backoffCeilingMs(policy, a) / 60_000)).toEqual([
      15, 30, 60, 120, 240, 480, 480,
    ]);
  });

  it('waits a random time below the ceiling (full jitter) and stops after the last attempt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (maxAttempts, baseMs, maxDelayMs, attempt, r) => {
          const p = { maxAttempts, baseMs, maxDelayMs };
          const d = nextRetryDelayMs(p, attempt, () => r);
          if (attempt >= maxAttempts) return d === undefined;
          return (
            d !== undefined && d >= 0 && d < Math.max(1, backoffCeilingMs(p, attempt)) && d <= maxDelayMs
          );
        },
      ),
    );
  });

  it('spreads retries: the lowest and highest random draws give 0 and just under the ceiling', () => {
    expect(nextRetryDelayMs(policy, 3, () => 0)).toBe(0);
    expect(nextRetryDelayMs(policy, 3, () => 0.999999)).toBe(Math.floor(0.999999 * 60 * 60_000));
  });
});

describe('attempt outcomes', () => {
  const policy = { maxAttempts: 3, baseMs: 1000, maxDelayMs: 10_000 };
  const now = new Date('2026-01-01T00:00:00Z');
  it.each([
    [{ statusCode: 200 }, 1, 'delivered'],
    [{ statusCode: 204 }, 3, 'delivered'],
    [{ statusCode: 410 }, 1, 'gone'],
    [{ statusCode: 500 }, 1, 'retry'],
    [{ statusCode: 404 }, 2, 'retry'],
    [{ statusCode: 301 }, 1, 'retry'],
    [{ error: 'timed out' }, 2, 'retry'],
    [{ statusCode: 503 }, 3, 'failed'],
    [{ error: 'ECONNREFUSED' }, 3, 'failed'],
  ] as const)('%j on attempt %i → %s', (result, attempt, kind) => {
    expect(outcomeOf(result, attempt, policy, now, () => 0.5).kind).toBe(kind);
  });

  it('schedules a retry after the jittered wait and says why', () => {
    const o = outcomeOf({ statusCode: 500 }, 2, policy, now, () => 0.5);
    expect(o).toEqual({
      kind: 'retry',
      statusCode: 500,
      error: 'the receiver answered 500',
      at: new Date(now.getTime() + 1000),
    });
  });
});

describe('signatures', () => {
  it('makes a whsec_ secret of 32 random bytes', () => {
    const s = newSigningSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(s);
  });

  it('signs so that the standardwebhooks verifier accepts it, with each secret during a rotation', async () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const payload = JSON.stringify({ id: 'evt-1', data: { amount: '12.30' } });
    const headers = await signatureHeaders(
      { eventId: 'evt-1', payload, secrets: [current, previous] },
      new Date(),
    );
    expect(headers['webhook-id']).toBe('evt-1');
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(payload, headers)).toEqual(JSON.parse(payload));
    expect(new Webhook(previous).verify(payload, headers)).toEqual(JSON.parse(payload));
    expect(() => new Webhook(newSigningSecret()).verify(payload, headers)).toThrow(/signature/);
    expect(() => new Webhook(current).verify(`${payload} `, headers)).toThrow(/signature/);
  });
});
