/**
 * Issue 46, item 4: every way of writing an address the server must not reach, refused by both
 * guards that judge URLs fetched on someone else's word (the webhook endpoint check and the UCP
 * platform-profile check), which share one classifier (lib/net/address.ts). The IPv6 forms that
 * carry an IPv4 address (IPv4-compatible `::7f00:1`, IPv4-translated `::ffff:0:7f00:1`, 6to4
 * `2002::/16`, Teredo, NAT64) passed the earlier hand-written list.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFetcher } from '../../gateway/agent/ucp/platform-profile.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { systemClock } from '../../lib/clock.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { addressRange, isPrivateAddress, isPublicAddress } from '../../lib/net/address.ts';
import { checkEndpointUrl } from '../../subgraphs/procurement/webhooks/endpoint-url.ts';

const profiles = profileFetcher({
  clock: systemClock,
  ttlMs: 60_000,
  maxEntries: 10,
  timeoutMs: 1000,
  allowInsecure: false,
});
afterAll(() => profiles.close());

/** [what, URL host as written, the range the classifier names]. */
const REFUSED: [string, string, string][] = [
  ['IPv4 loopback', '127.0.0.1', 'loopback'],
  ['loopback elsewhere in 127/8', '127.8.9.10', 'loopback'],
  ['decimal loopback (the URL parser reads it as 127.0.0.1)', '2130706433', 'loopback'],
  ['hexadecimal short loopback', '0x7f.1', 'loopback'],
  ['IPv6 loopback', '[::1]', 'loopback'],
  ['IPv4-mapped loopback', '[::ffff:127.0.0.1]', 'loopback'],
  ['IPv4-mapped loopback, hex', '[::ffff:7f00:1]', 'loopback'],
  ['IPv4-compatible loopback', '[::7f00:1]', 'reserved'],
  ['IPv4-compatible private', '[::10.0.0.1]', 'reserved'],
  ['IPv4-translated loopback', '[::ffff:0:7f00:1]', 'rfc6145'],
  ['6to4 of loopback', '[2002:7f00:1::1]', '6to4'],
  ['6to4 of a private network', '[2002:c0a8:101::1]', '6to4'],
  ['6to4 of a public address (a relay still decides)', '[2002:808:808::1]', '6to4'],
  ['Teredo', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'teredo'],
  ['NAT64 of loopback', '[64:ff9b::7f00:1]', 'rfc6052'],
  ['local-use NAT64', '[64:ff9b:1::a00:1]', 'rfc6052'],
  ['private 10/8', '10.1.2.3', 'private'],
  ['private 172.16/12', '172.31.255.255', 'private'],
  ['private 192.168/16', '192.168.1.1', 'private'],
  ['carrier-grade NAT', '100.64.0.1', 'carrierGradeNat'],
  ['link-local (cloud metadata)', '169.254.169.254', 'linkLocal'],
  ['IPv6 link-local', '[fe80::1]', 'linkLocal'],
  ['unique-local fd00::/8', '[fd00::1]', 'uniqueLocal'],
  ['unique-local fc00::/8', '[fc00::1]', 'uniqueLocal'],
  ['deprecated site-local', '[fec0::1]', 'deprecatedSiteLocal'],
  ['IPv4 unspecified', '0.0.0.0', 'unspecified'],
  ['IPv6 unspecified', '[::]', 'unspecified'],
  ['IPv4 multicast', '224.0.0.1', 'multicast'],
  ['IPv6 multicast', '[ff02::1]', 'multicast'],
  ['broadcast', '255.255.255.255', 'broadcast'],
  ['reserved 240/4', '240.0.0.1', 'reserved'],
  ['documentation TEST-NET-1', '192.0.2.1', 'reserved'],
  ['documentation TEST-NET-3', '203.0.113.5', 'reserved'],
  ['benchmarking 198.18/15', '198.18.0.1', 'reserved'],
  ['IPv6 documentation', '[2001:db8::1]', 'reserved'],
  ['IPv6 discard-only', '[100::1]', 'discard'],
  ['IPv6 outside 2000::/3', '[4000::1]', 'reserved'],
];

const PUBLIC: [string, string][] = [
  ['a public IPv4 address', '93.184.215.14'],
  ['a public IPv6 address', '[2606:4700:4700::1111]'],
  ['a public IPv4 address, IPv4-mapped (the socket connects to the IPv4 one)', '[::ffff:8.8.8.8]'],
];

const hostOf = (url: string) => new URL(url).hostname;

describe('the address classifier, one table for both guards', () => {
  it.each(REFUSED)('refuses %s (%s) as %s', (_what, host, range) => {
    const webhook = `https://${host}/orders`;
    const profile = `https://${host}/ucp/profile.json`;
    expect(addressRange(hostOf(webhook))).toBe(range);
    expect(isPrivateAddress(hostOf(webhook))).toBe(true);
    expect(checkEndpointUrl(webhook, false)).toEqual({
      ok: false,
      reason: 'points to a loopback or private address',
    });
    expect(profiles.check(profile)).toMatchObject({ status: 400, code: 'invalid_profile_url' });
    // The development switches still let them through: the classifier made the difference.
    expect(checkEndpointUrl(webhook, true).ok).toBe(true);
  });

  it.each(PUBLIC)('accepts %s (%s)', (_what, host) => {
    expect(isPublicAddress(hostOf(`https://${host}/`))).toBe(true);
    expect(checkEndpointUrl(`https://${host}/orders`, false).ok).toBe(true);
    expect(profiles.check(`https://${host}/ucp/profile.json`)).toBeUndefined();
  });

  it('leaves host names to the lookup guard, and never throws on any text', () => {
    expect(addressRange('hooks.example.com')).toBeUndefined();
    expect(isPrivateAddress('hooks.example.com')).toBe(false);
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const range = addressRange(s);
        return range === undefined || typeof range === 'string';
      }),
      { numRuns: 2000 },
    );
  });

  /** An IPv4 address inside a range the server must not reach, as four octets. */
  const nonPublicV4 = fc.oneof(
    fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
  );
  const hex = (a: number, b: number) => ((a << 8) | b).toString(16);

  it('refuses every IPv6 form that carries a non-public IPv4 address, in both guards (fuzz)', () => {
    fc.assert(
      fc.property(nonPublicV4, fc.nat(0xffff), ([a, b, c, d], tail) => {
        const v4 = `${a}.${b}.${c}.${d}`;
        const hi = hex(a, b);
        const lo = hex(c, d);
        const forms = [
          v4,
          `[::ffff:${v4}]`,
          `[::ffff:${hi}:${lo}]`,
          `[::${hi}:${lo}]`,
          `[::ffff:0:${hi}:${lo}]`,
          `[2002:${hi}:${lo}::${tail.toString(16)}]`,
          `[64:ff9b::${hi}:${lo}]`,
        ];
        return forms.every(
          (host) =>
            isPrivateAddress(hostOf(`https://${host}/`)) &&
            !checkEndpointUrl(`https://${host}/x`, false).ok &&
            profiles.check(`https://${host}/p.json`) !== undefined,
        );
      }),
      { numRuns: 500 },
    );
  });
});

describe('the running system refuses the forms the probe used', () => {
  let sys: TestSystem;
  let admin: string;
  beforeAll(async () => {
    sys = await startEmbedded();
    admin = await sys.token(['webhooks:admin']);
  });
  afterAll(() => sys?.close());

  const PROBE = ['[::7f00:1]', '[::ffff:0:7f00:1]', '[2002:7f00:1::1]'];

  it.each(PROBE)('refuses a webhook endpoint at https://%s/ with BAD_USER_INPUT', async (host) => {
    const res = await sys.gql(
      'mutation ($url: String!, $types: [String!]!) { registerWebhookEndpoint(url: $url, eventTypes: $types) { endpoint { endpointId } } }',
      { token: admin, variables: { url: `https://${host}/hooks`, types: [EventTypes.OrderPlaced] } },
    );
    expect(res.status).toBeLessThan(500);
    expect(res.data?.registerWebhookEndpoint ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'url' });
    expect(res.errors?.[0]?.message).toMatch(/private/);
  });

  it.each(PROBE)('refuses a platform profile at https://%s/ as 400 invalid_profile_url', async (host) => {
    const res = await fetch(`${sys.url}/ucp/checkout-sessions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ucp-agent': `profile="https://${host}/profile.json"`,
        authorization: 'Bearer acp_not_a_key',
      },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_profile_url' });
  });
});
