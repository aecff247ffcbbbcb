/**
 * A checkout API key bound to the platform profile it may act for (UCP overview.md at
 * v2026-04-08, "Identity Binding": for API keys the business MUST confirm that the principal may
 * act for the profile in `UCP-Agent`, and reject a conflict). The binding is given when the key
 * is issued (GraphQL `issueCheckoutApiKey(input: {…, ucpProfile})`); a conflict, and a key with
 * no binding, are 403 `profile_not_trusted`. ACP, which has no profile, takes any key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyProfileRefusal } from '../../gateway/agent/ucp/identity.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { bindingAllows, isOriginBinding } from '../../subgraphs/procurement/api-keys/profile-binding.ts';
import { acp, issueKey } from '../acp/support/acp.ts';
import { FIXTURE } from './checkout.suite.ts';

describe('a binding allows (pure)', () => {
  const URL_BOUND = 'https://platform.example/ucp/profile.json';
  const ORIGIN_BOUND = 'https://platform.example';
  it.each([
    [URL_BOUND, 'https://platform.example/ucp/profile.json', true],
    [URL_BOUND, 'HTTPS://PLATFORM.example:443/ucp/x/../profile.json', true],
    [URL_BOUND, 'https://platform.example/ucp/other.json', false],
    [URL_BOUND, 'https://platform.example/ucp/profile.json?v=2', false],
    [URL_BOUND, 'https://evil.example/ucp/profile.json', false],
    [ORIGIN_BOUND, 'https://platform.example/any/profile.json', true],
    [ORIGIN_BOUND, 'https://platform.example:8443/profile.json', false],
    [ORIGIN_BOUND, 'http://platform.example/profile.json', false],
    [ORIGIN_BOUND, 'https://platform.example.evil.example/profile.json', false],
    [ORIGIN_BOUND, 'https://sub.platform.example/profile.json', false],
    [ORIGIN_BOUND, 'not a url', false],
  ])('%s for %s: %s', (binding, profile, allowed) => {
    expect(bindingAllows(binding, profile)).toBe(allowed);
  });

  it('tells an origin from a profile URL', () => {
    expect(isOriginBinding(ORIGIN_BOUND)).toBe(true);
    expect(isOriginBinding('http://127.0.0.1:8080')).toBe(true);
    expect(isOriginBinding(URL_BOUND)).toBe(false);
    expect(isOriginBinding('https://platform.example/?profile=1')).toBe(false);
  });

  it('refuses an unbound key on UCP, and a key bound elsewhere, naming neither secret nor more than the key id', () => {
    const key = { id: 'ak_000000000000000000000001', ucpProfile: null };
    expect(keyProfileRefusal(key, URL_BOUND)?.reason).toContain('not bound');
    expect(keyProfileRefusal({ ...key, ucpProfile: ORIGIN_BOUND }, URL_BOUND)).toBeUndefined();
    expect(keyProfileRefusal({ ...key, ucpProfile: URL_BOUND }, 'https://evil.example/p.json')?.content).toBe(
      'This API key is not bound to the profile in UCP-Agent.',
    );
  });
});

const ISSUE = `mutation ($input: IssueCheckoutApiKeyInput!) {
  issueCheckoutApiKey(input: $input) { key apiKey { id ucpProfile } }
}`;
const LIST = '{ checkoutApiKeys { id ucpProfile } }';
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

describe('UCP calls with a bound key (embedded)', () => {
  let sys: TestSystem;
  let profiles: ProfileServer;
  let other: ProfileServer;
  let profileUrl: string;
  let sameOrigin: string;
  let elsewhere: string;
  let n = 0;
  const create = (key: string, profile: string) =>
    ucpCall(sys.url, { key, profileUrl: profile }, 'POST', '/checkout-sessions', {
      line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
    });
  const key = async (ucpProfile?: string) =>
    (await issueKey(sys, { spiffeId: `${AGENT}/ucp-bound-${++n}`, ...(ucpProfile ? { ucpProfile } : {}) }))
      .key;

  beforeAll(async () => {
    sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true', RATE_LIMIT_CAPACITY: '100000' });
    profiles = await startProfileServer();
    other = await startProfileServer();
    profileUrl = profiles.set('/platform/profile.json', platformProfile());
    sameOrigin = profiles.set('/platform/v2/profile.json', platformProfile());
    elsewhere = other.set('/platform/profile.json', platformProfile());
  }, 120_000);
  afterAll(async () => {
    await profiles?.close();
    await other?.close();
    await sys?.close();
  });

  it('issues and lists the binding over GraphQL, and names the field of a bad one', async () => {
    const admin = await sys.token(['agents:admin'], 'ops-bind');
    const ok = await sys.gql(ISSUE, {
      token: admin,
      variables: {
        input: {
          name: 'Bound',
          spiffeId: `${AGENT}/ucp-bound-gql`,
          agentId: 'agent-ucp-bound-gql',
          scopes: ['orders:create'],
          ucpProfile: `${profiles.origin}/`,
        },
      },
    });
    expect(ok.errors).toBeUndefined();
    const issued = (ok.data as { issueCheckoutApiKey: { apiKey: { id: string; ucpProfile: string } } })
      .issueCheckoutApiKey.apiKey;
    expect(issued.ucpProfile).toBe(profiles.origin);
    const list = await sys.gql(LIST, { token: admin });
    expect(
      (list.data as { checkoutApiKeys: { id: string; ucpProfile: string | null }[] }).checkoutApiKeys,
    ).toContainEqual({ id: issued.id, ucpProfile: profiles.origin });
    const bad = await sys.gql(ISSUE, {
      token: admin,
      variables: {
        input: {
          name: 'Bad',
          spiffeId: `${AGENT}/ucp-bound-bad`,
          agentId: 'agent-ucp-bound-bad',
          scopes: ['orders:create'],
          ucpProfile: 'ftp://platform.example/profile.json',
        },
      },
    });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ucpProfile' });
  });

  it('acts for the profile URL it is bound to, and for no other profile, not even on the same origin', async () => {
    const k = await key(profileUrl);
    expect((await create(k, profileUrl)).status).toBe(201);
    for (const profile of [sameOrigin, elsewhere]) {
      const r = await create(k, profile);
      expect([profile, r.status, r.body.code]).toEqual([profile, 403, 'profile_not_trusted']);
      expect(r.body.content).toBe('This API key is not bound to the profile in UCP-Agent.');
    }
  });

  it('acts for every profile of the origin it is bound to, and for none elsewhere', async () => {
    const k = await key(profiles.origin);
    expect((await create(k, profileUrl)).status).toBe(201);
    expect((await create(k, sameOrigin)).status).toBe(201);
    const r = await create(k, elsewhere);
    expect([r.status, r.body.code]).toEqual([403, 'profile_not_trusted']);
  });

  it('refuses an unbound key on every UCP route before fetching the profile; ACP takes the same key', async () => {
    const k = await key();
    const before = profiles.hits('/platform/profile.json');
    const created = await create(k, profileUrl);
    expect([created.status, created.body.code]).toEqual([403, 'profile_not_trusted']);
    expect(String(created.body.content)).toContain('not bound to a platform profile');
    const read = await ucpCall(sys.url, { key: k, profileUrl }, 'GET', `/orders/ord_${'0'.repeat(32)}`);
    expect([read.status, read.body.code]).toEqual([403, 'profile_not_trusted']);
    expect(profiles.hits('/platform/profile.json')).toBe(before);
    const viaAcp = await acp(sys.url, k, 'POST', '/checkout_sessions', {
      currency: 'usd',
      capabilities: {},
      line_items: [{ id: FIXTURE.itemA, quantity: 1 }],
    });
    expect(viaAcp.status).toBe(201);
  });

  it('still answers a malformed UCP-Agent 400 invalid_profile_url, whatever the key is bound to', async () => {
    const k = await key(profileUrl);
    const r = await ucpCall(sys.url, { key: k }, 'GET', '/checkout-sessions/cs_x', undefined, {
      'ucp-agent': 'profile="nope"',
    });
    expect([r.status, r.body.code]).toEqual([400, 'invalid_profile_url']);
  });
});
