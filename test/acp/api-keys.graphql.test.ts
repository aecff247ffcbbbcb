/**
 * The checkout API key operations through the embedded gateway, as an operator calls them
 * (docs/acp-keys.md), and the gateway's verifier on the same store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyVerifier, checkoutApiKeysFor } from '../../gateway/agent/identity/api-key.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';

const ISSUE = `mutation ($input: IssueCheckoutApiKeyInput!) {
  issueCheckoutApiKey(input: $input) { key apiKey { id name spiffeId agentId scopes createdBy revokedAt webhook { url } } }
}`;
const REVOKE = 'mutation ($id: ID!) { revokeCheckoutApiKey(id: $id) { id revokedAt revokedBy } }';
const WEBHOOK = `mutation ($id: ID!, $url: String!) {
  setCheckoutWebhook(id: $id, url: $url) { signingSecret apiKey { id webhook { url secretSet } } }
}`;
const LIST =
  '{ checkoutApiKeys { id name spiffeId agentId scopes createdAt createdBy revokedAt lastUsedAt webhook { url secretSet } } }';

const INPUT = {
  name: 'ChatGPT',
  spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/chatgpt',
  agentId: 'agent-chatgpt-01',
  scopes: ['orders:create', 'orders:read', 'orders:cancel'],
};

interface Issued {
  key: string;
  apiKey: { id: string; scopes: string[] };
}

let sys: TestSystem;
let admin: string;

// Default settings: loopback and private webhook URLs are refused.
beforeAll(async () => {
  sys = await startEmbedded();
  admin = await sys.token(['agents:admin'], 'ops-alice');
});
afterAll(() => sys?.close());

const issue = async (input: Record<string, unknown> = INPUT, token = admin) =>
  sys.gql(ISSUE, { token, variables: { input } });
const issued = async (): Promise<Issued> => {
  const res = await issue();
  expect(res.errors).toBeUndefined();
  return (res.data as { issueCheckoutApiKey: Issued }).issueCheckoutApiKey;
};

describe('checkout API keys through /graphql', () => {
  it.each([
    ['no token', undefined, 'UNAUTHENTICATED'],
    ['a token without agents:admin', 'other', 'FORBIDDEN'],
  ])('refuses every operation with %s', async (_what, which, code) => {
    const token = which ? await sys.token(['agents:read', 'webhooks:admin', 'orders:read']) : undefined;
    const before = (await (await checkoutApiKeysFor(sys.platform)).list()).length;
    for (const [query, variables] of [
      [ISSUE, { input: INPUT }],
      [REVOKE, { id: `ak_${'0'.repeat(24)}` }],
      [WEBHOOK, { id: `ak_${'0'.repeat(24)}`, url: 'https://platform.example.com/hooks' }],
      [LIST, {}],
    ] as const) {
      const res = await sys.gql(query, { ...(token ? { token } : {}), variables });
      expect(res.errors?.[0]?.extensions?.code).toBe(code);
      expect(Object.values(res.data ?? {}).filter(Boolean)).toEqual([]);
    }
    // Nothing was issued.
    expect(await (await checkoutApiKeysFor(sys.platform)).list()).toHaveLength(before);
  });

  it('issues a key shown once: the list never shows it, the gateway verifies it, a revocation ends it', async () => {
    const { key, apiKey } = await issued();
    expect(key).toMatch(/^acp_ak_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toMatchObject({
      name: 'ChatGPT',
      agentId: 'agent-chatgpt-01',
      scopes: ['orders:create', 'orders:read', 'orders:cancel'],
      createdBy: 'ops-alice',
      revokedAt: null,
      webhook: null,
    });

    const list = await sys.gql(LIST, { token: admin });
    expect(list.errors).toBeUndefined();
    expect((list.data as { checkoutApiKeys: { id: string }[] }).checkoutApiKeys.map((k) => k.id)).toContain(
      apiKey.id,
    );
    expect(JSON.stringify(list)).not.toContain(key.slice(-43));

    // The gateway's verifier on the store of the same process (embedded: the same instance).
    const store = await checkoutApiKeysFor(sys.platform);
    const verifier = apiKeyVerifier(store, {
      clock: sys.platform.clock,
      trustDomains: sys.config.SPIFFE_TRUST_DOMAINS,
    });
    const ok = await verifier.verify(`Bearer ${key}`);
    expect(ok.ok && ok.id.id).toBe(INPUT.spiffeId);

    const revoked = await sys.gql(REVOKE, { token: admin, variables: { id: apiKey.id } });
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data?.revokeCheckoutApiKey).toMatchObject({ id: apiKey.id, revokedBy: 'ops-alice' });
    // Revoked in this process: refused at once, not after the cache bound.
    expect((await verifier.verify(`Bearer ${key}`)).ok).toBe(false);
    // Idempotent: the first revocation stands.
    const again = await sys.gql(REVOKE, {
      token: await sys.token(['agents:admin'], 'ops-bob'),
      variables: { id: apiKey.id },
    });
    expect(again.data?.revokeCheckoutApiKey).toEqual(revoked.data?.revokeCheckoutApiKey);
  });

  it('answers NOT_FOUND for an unknown key', async () => {
    for (const id of [`ak_${'9'.repeat(24)}`, 'whatever']) {
      const r = await sys.gql(REVOKE, { token: admin, variables: { id } });
      expect(r.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const w = await sys.gql(WEBHOOK, {
        token: admin,
        variables: { id, url: 'https://platform.example.com/h' },
      });
      expect(w.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });

  it("refuses another platform's SPIFFE ID (it would see that platform's sessions), and rotates a key of the same name", async () => {
    const spiffeId = 'spiffe://example.org/ns/ai/sa/procurement-agent/one-platform';
    expect((await issue({ ...INPUT, spiffeId, name: 'Platform One' })).errors).toBeUndefined();
    const other = await issue({ ...INPUT, spiffeId, name: 'Platform Two' });
    expect(other.data?.issueCheckoutApiKey ?? null).toBeNull();
    expect(other.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'spiffeId' });
    expect(other.errors?.[0]?.message).toContain('Platform One');
    // A second key of the same platform (a rotation) is fine.
    expect((await issue({ ...INPUT, spiffeId, name: 'Platform One' })).errors).toBeUndefined();
  });

  const bad: [string, Record<string, unknown>, string][] = [
    [
      'a SPIFFE ID outside the trust domains',
      { spiffeId: 'spiffe://evil.example/ns/ai/sa/procurement-agent' },
      'spiffeId',
    ],
    [
      'a sibling SPIFFE path',
      { spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent-evil' },
      'spiffeId',
    ],
    ['not a SPIFFE ID', { spiffeId: 'procurement-agent' }, 'spiffeId'],
    ['an unknown scope', { scopes: ['orders:create', 'orders:delete'] }, 'scopes'],
    ['no scope', { scopes: [] }, 'scopes'],
    ['a short agent id', { agentId: 'a1' }, 'agentId'],
    ['an empty name', { name: '' }, 'name'],
  ];
  it.each(bad)('refuses %s with BAD_USER_INPUT naming the field', async (_what, change, field) => {
    const res = await issue({ ...INPUT, ...change });
    expect(res.status).toBeLessThan(500);
    expect(res.data?.issueCheckoutApiKey ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });

  const privateUrls: [string, string, RegExp][] = [
    ['a loopback URL', 'http://127.0.0.1:9/hooks', /private/],
    ['localhost', 'http://localhost/hooks', /private/],
    ['the metadata address', 'http://169.254.169.254/', /private/],
    ['a private network', 'https://10.1.2.3/hooks', /private/],
    ['an IPv6 loopback', 'http://[::1]/hooks', /private/],
    ['an ftp URL', 'ftp://platform.example.com/hooks', /http or https/],
    ['credentials', 'https://u:p@platform.example.com/hooks', /credentials/],
  ];
  it.each(privateUrls)(
    'refuses a webhook at %s as registerWebhookEndpoint does',
    async (_what, url, message) => {
      const { apiKey } = await issued();
      const res = await sys.gql(WEBHOOK, { token: admin, variables: { id: apiKey.id, url } });
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'url' });
      expect(res.errors?.[0]?.message).toMatch(message);
      const same = await sys.gql(
        'mutation ($url: String!) { registerWebhookEndpoint(url: $url, eventTypes: ["com.agent-commerce.procurement.OrderPlaced"]) { signingSecret } }',
        { token: await sys.token(['webhooks:admin']), variables: { url } },
      );
      expect(same.errors?.[0]?.message).toBe(res.errors?.[0]?.message);
    },
  );

  it('sets a webhook and returns its whsec_ signing secret once; the sender reads it, the list never shows it', async () => {
    const { apiKey } = await issued();
    const res = await sys.gql(WEBHOOK, {
      token: admin,
      variables: { id: apiKey.id, url: 'https://platform.example.com/acp/orders' },
    });
    expect(res.errors).toBeUndefined();
    const r = (res.data as { setCheckoutWebhook: { signingSecret: string; apiKey: unknown } })
      .setCheckoutWebhook;
    expect(r.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.apiKey).toEqual({
      id: apiKey.id,
      webhook: { url: 'https://platform.example.com/acp/orders', secretSet: true },
    });
    const list = await sys.gql(LIST, { token: admin });
    expect(JSON.stringify(list)).not.toContain(r.signingSecret.slice(6));
    expect(await (await checkoutApiKeysFor(sys.platform)).webhookOf(apiKey.id)).toEqual({
      url: 'https://platform.example.com/acp/orders',
      secret: r.signingSecret,
    });
    // A revoked key gets no new webhook.
    await sys.gql(REVOKE, { token: admin, variables: { id: apiKey.id } });
    const late = await sys.gql(WEBHOOK, {
      token: admin,
      variables: { id: apiKey.id, url: 'https://platform.example.com/x' },
    });
    expect(late.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });
});

describe('with WEBHOOK_ALLOW_PRIVATE_URLS (tests, local receivers)', () => {
  let local: TestSystem;
  beforeAll(async () => {
    local = await startEmbedded({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  });
  afterAll(() => local?.close());

  it('accepts a loopback webhook URL', async () => {
    const token = await local.token(['agents:admin'], 'ops-alice');
    const { data } = await local.gql(ISSUE, { token, variables: { input: INPUT } });
    const id = (data as { issueCheckoutApiKey: Issued }).issueCheckoutApiKey.apiKey.id;
    const res = await local.gql(WEBHOOK, { token, variables: { id, url: 'http://127.0.0.1:9000/hooks' } });
    expect(res.errors).toBeUndefined();
  });
});
