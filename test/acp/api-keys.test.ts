import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyVerifier } from '../../gateway/agent/identity/api-key.ts';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import {
  ApiKeyConflict,
  ApiKeyInputInvalid,
  ApiKeyNotFound,
} from '../../subgraphs/procurement/api-keys/errors.ts';
import { apiKeyMigrations } from '../../subgraphs/procurement/api-keys/migrations.ts';
import { type CheckoutApiKeys, sqlCheckoutApiKeys } from '../../subgraphs/procurement/api-keys/store.ts';
import type { CheckoutApiKeyInput } from '../../subgraphs/procurement/api-keys/types.ts';

/** The one store adapter runs on both SQL stores: PGlite (embedded) and Postgres (distributed). */
const adapters: [string, () => Promise<{ db: Db; drop(): Promise<void> }>][] = [
  ['PGlite', async () => ({ db: await openPglite(undefined, TEST_PGLITE), drop: async () => {} })],
  [
    'Postgres',
    async () => {
      const pg = await freshPostgres('acp_api_keys');
      return { db: await openPostgres(pg.url, 4), drop: pg.drop };
    },
  ],
];

const DOMAINS = ['example.org'];
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent/chatgpt';
const INPUT: CheckoutApiKeyInput = {
  name: 'ChatGPT',
  spiffeId: AGENT,
  agentId: 'agent-chatgpt-01',
  scopes: ['orders:read', 'orders:create'],
};
const bearer = (key: string) => `Bearer ${key}`;

describe.each(adapters)('checkout API keys on %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  let clock: ManualClock;
  let keys: CheckoutApiKeys;
  /** Another replica: its own store instance on the same database (no revocation listener shared). */
  let replica: CheckoutApiKeys;

  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrate(db, apiKeyMigrations);
    await migrate(db, apiKeyMigrations); // applied once: a second start changes nothing
    clock = new ManualClock();
    const opts = { clock, trustDomains: DOMAINS, allowPrivateUrls: false };
    keys = sqlCheckoutApiKeys(db, opts);
    replica = sqlCheckoutApiKeys(db, opts);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('issues a key that verifies as its SPIFFE ID with its scopes', async () => {
    const { key, apiKey } = await keys.issue(INPUT, 'ops-alice');
    expect(key).toMatch(/^acp_ak_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`acp_${apiKey.id}_`)).toBe(true);
    expect(apiKey).toMatchObject({
      name: 'ChatGPT',
      spiffeId: AGENT,
      agentId: 'agent-chatgpt-01',
      // Canonical order, whatever order they were given in.
      scopes: ['orders:create', 'orders:read'],
      createdAt: clock.now(),
      createdBy: 'ops-alice',
      revokedAt: null,
      revokedBy: null,
      webhook: null,
    });
    const verdict = await apiKeyVerifier(keys, { clock, trustDomains: DOMAINS }).verify(bearer(key));
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.key.id).toBe(apiKey.id);
    expect(verdict.id.id).toBe(AGENT);
    expect([...verdict.scopes].sort()).toEqual(['orders:create', 'orders:read']);
    expect((await keys.get(apiKey.id))?.lastUsedAt).toBe(clock.now());
  });

  it('stores only the SHA-256 of the key: the plaintext is nowhere in the table', async () => {
    const { key, apiKey } = await keys.issue(INPUT, 'ops-alice');
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM checkout_api_keys');
    const table = JSON.stringify(rows);
    expect(table).not.toContain(key);
    expect(table).not.toContain(key.slice(-43));
    const row = rows.find((r) => r.id === apiKey.id);
    expect(row?.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
  });

  it('refuses a revoked key at once after forget, and on every replica within the cache bound', async () => {
    const { key, apiKey } = await keys.issue(INPUT, 'ops-alice');
    const here = apiKeyVerifier(replica, { clock, trustDomains: DOMAINS, cacheMs: 5_000 });
    const there = apiKeyVerifier(replica, { clock, trustDomains: DOMAINS, cacheMs: 5_000 });
    expect((await here.verify(bearer(key))).ok).toBe(true);
    expect((await there.verify(bearer(key))).ok).toBe(true);

    expect(await keys.revoke(apiKey.id, 'ops-bob')).toBe(true);
    expect(await keys.revoke(apiKey.id, 'ops-carol')).toBe(false); // idempotent
    expect(await keys.get(apiKey.id)).toMatchObject({ revokedAt: clock.now(), revokedBy: 'ops-bob' });
    expect(await keys.verify(key)).toBeNull();

    // The cached verdicts still stand inside the bound…
    clock.advance(4_999);
    expect((await here.verify(bearer(key))).ok).toBe(true);
    here.forget(apiKey.id);
    expect(await here.verify(bearer(key))).toEqual({
      ok: false,
      reason: 'unknown or revoked checkout API key',
    });
    expect((await there.verify(bearer(key))).ok).toBe(true);
    // …and not a moment after it.
    clock.advance(1);
    expect((await there.verify(bearer(key))).ok).toBe(false);
  });

  it('forgets a key revoked through the same store instance at once (embedded: one instance)', async () => {
    const { key, apiKey } = await keys.issue(INPUT, 'ops-alice');
    const verifier = apiKeyVerifier(keys, { clock, trustDomains: DOMAINS });
    expect((await verifier.verify(bearer(key))).ok).toBe(true);
    await keys.revoke(apiKey.id, 'ops-bob');
    expect((await verifier.verify(bearer(key))).ok).toBe(false);
  });

  it('caches negative verdicts too, and forget() without an argument drops everything', async () => {
    let lookups = 0;
    const counting = {
      verify: (k: string) => {
        lookups++;
        return keys.verify(k);
      },
    };
    const verifier = apiKeyVerifier(counting, { clock, trustDomains: DOMAINS });
    const unknown = `acp_ak_${'0'.repeat(24)}_${'A'.repeat(43)}`;
    await Promise.all([verifier.verify(bearer(unknown)), verifier.verify(bearer(unknown))]);
    await verifier.verify(bearer(unknown));
    expect(lookups).toBe(1);
    verifier.forget();
    await verifier.verify(bearer(unknown));
    expect(lookups).toBe(2);
  });

  it('refuses a key whose trust domain is no longer configured', async () => {
    const { key } = await keys.issue(INPUT, 'ops-alice');
    const verdict = await apiKeyVerifier(keys, { clock, trustDomains: ['prod.example.com'] }).verify(
      bearer(key),
    );
    expect(verdict).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/outside the trusted domains/),
    });
  });

  const unusable: [string, string | undefined, RegExp][] = [
    ['no header', undefined, /no Authorization header/],
    ['an empty header', '', /no Authorization header/],
    ['Basic credentials', 'Basic YWxpY2U6c2VjcmV0', /not a Bearer credential/],
    ['Bearer without a credential', 'Bearer ', /not a Bearer credential/],
    ['two spaces', `Bearer  acp_ak_${'1'.repeat(24)}_${'B'.repeat(43)}`, /not a Bearer credential/],
    [
      'a trailing credential',
      `Bearer acp_ak_${'1'.repeat(24)}_${'B'.repeat(43)} x`,
      /not a Bearer credential/,
    ],
    ['a JWT', 'Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', /not a checkout API key/],
    ['a short secret', `Bearer acp_ak_${'1'.repeat(24)}_${'B'.repeat(42)}`, /not a checkout API key/],
    ['an upper-case id', `Bearer acp_ak_${'A'.repeat(24)}_${'B'.repeat(43)}`, /not a checkout API key/],
    ['an unknown key', `Bearer acp_ak_${'1'.repeat(24)}_${'B'.repeat(43)}`, /unknown or revoked/],
  ];
  it.each(unusable)('refuses %s without echoing it', async (_what, header, reason) => {
    const verdict = await apiKeyVerifier(keys, { clock, trustDomains: DOMAINS }).verify(header);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.reason).toMatch(reason);
    const credential = header?.split(' ').filter(Boolean)[1];
    if (credential) expect(verdict.reason).not.toContain(credential.slice(0, 20));
  });

  it('accepts the Bearer scheme in any case', async () => {
    const { key } = await keys.issue(INPUT, 'ops-alice');
    expect((await apiKeyVerifier(keys, { clock, trustDomains: DOMAINS }).verify(`bearer ${key}`)).ok).toBe(
      true,
    );
  });

  it('never verifies a random bearer string, and never throws on one', async () => {
    const verifier = apiKeyVerifier(keys, { clock, trustDomains: DOMAINS });
    const keyShaped = fc
      .tuple(fc.stringMatching(/^[0-9a-f]{24}$/), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/))
      .map(([id, secret]) => `acp_ak_${id}_${secret}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), keyShaped), async (s) => {
        for (const header of [s, `Bearer ${s}`]) expect((await verifier.verify(header)).ok).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  const badInputs: [string, Partial<CheckoutApiKeyInput>, string][] = [
    [
      'a SPIFFE ID in another trust domain',
      { spiffeId: 'spiffe://evil.example/ns/ai/sa/procurement-agent' },
      'spiffeId',
    ],
    ['a sibling path', { spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent-evil' }, 'spiffeId'],
    ['another workload', { spiffeId: 'spiffe://example.org/ns/ai/sa/pricing' }, 'spiffeId'],
    ['a dot segment', { spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/../x' }, 'spiffeId'],
    ['an https URL as SPIFFE ID', { spiffeId: 'https://example.org/ns/ai/sa/procurement-agent' }, 'spiffeId'],
    ['an empty name', { name: '   ' }, 'name'],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
    ['control characters in the name', { name: 'Chat\u0007GPT' }, 'name'],
    ['an agent id under 10 characters', { agentId: 'agent-1' }, 'agentId'],
    ['an agent id over 64 characters', { agentId: 'a'.repeat(65) }, 'agentId'],
    [
      'an agent id holding a lone surrogate (the order parser refuses it)',
      { agentId: 'agent-\ud800-chatgpt' },
      'agentId',
    ],
    ['no scope', { scopes: [] }, 'scopes'],
    ['an operator role as scope', { scopes: ['orders:create', 'agents:admin'] }, 'scopes'],
    ['a UCP profile that is not a URL', { ucpProfile: 'platform.example' }, 'ucpProfile'],
    ['a UCP profile over http', { ucpProfile: 'http://platform.example/profile.json' }, 'ucpProfile'],
    ['a UCP profile on loopback', { ucpProfile: 'https://127.0.0.1/profile.json' }, 'ucpProfile'],
    ['a UCP profile with credentials', { ucpProfile: 'https://u:p@platform.example/p.json' }, 'ucpProfile'],
  ];
  it.each(badInputs)('cannot issue a key for %s', async (_what, change, field) => {
    const before = (await keys.list()).length;
    const err = await keys.issue({ ...INPUT, ...change }, 'ops-alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiKeyInputInvalid);
    expect((err as ApiKeyInputInvalid).field).toBe(field);
    expect((await keys.list()).length).toBe(before);
  });

  it('keeps the UCP profile a key is bound to: a URL normalised, an origin without its slash, none as null', async () => {
    const bound = async (ucpProfile: string | null | undefined, n: number) => {
      const input = { ...INPUT, spiffeId: `${INPUT.spiffeId}/ucp-${n}`, name: `UCP ${n}` };
      const { apiKey } = await keys.issue(ucpProfile === undefined ? input : { ...input, ucpProfile }, 'ops');
      expect((await replica.get(apiKey.id))?.ucpProfile).toBe(apiKey.ucpProfile);
      return apiKey.ucpProfile;
    };
    expect(await bound(' HTTPS://Platform.Example:443/ucp/./profile.json ', 1)).toBe(
      'https://platform.example/ucp/profile.json',
    );
    expect(await bound('https://platform.example/', 2)).toBe('https://platform.example');
    expect(await bound('https://platform.example:8443', 3)).toBe('https://platform.example:8443');
    expect(await bound(undefined, 4)).toBeNull();
    expect(await bound(null, 5)).toBeNull();
    expect(await bound('  ', 6)).toBeNull();
  });

  it('lists keys oldest first without any secret', async () => {
    const { key } = await keys.issue(
      { ...INPUT, name: 'Listed', spiffeId: `${INPUT.spiffeId}/listed` },
      'ops-alice',
    );
    const list = await keys.list();
    expect(list.at(-1)?.name).toBe('Listed');
    expect(list.map((k) => k.createdAt)).toEqual([...list.map((k) => k.createdAt)].sort((a, b) => a - b));
    expect(JSON.stringify(list)).not.toContain(key.slice(-43));
  });

  it('keeps a webhook URL and its signing secret for the sender, never in the record', async () => {
    const { apiKey } = await keys.issue(INPUT, 'ops-alice');
    expect(await keys.webhookOf(apiKey.id)).toBeNull();
    const updated = await keys.setWebhook(
      apiKey.id,
      'https://platform.example.com/acp/hooks',
      'whsec_c2VjcmV0',
    );
    expect(updated.webhook).toEqual({ url: 'https://platform.example.com/acp/hooks', secretSet: true });
    expect(JSON.stringify(updated)).not.toContain('whsec_');
    expect(await keys.webhookOf(apiKey.id)).toEqual({
      url: 'https://platform.example.com/acp/hooks',
      secret: 'whsec_c2VjcmV0',
    });
    await expect(keys.setWebhook(apiKey.id, 'http://10.0.0.8/hooks', 'whsec_x')).rejects.toBeInstanceOf(
      ApiKeyInputInvalid,
    );
    await keys.revoke(apiKey.id, 'ops-bob');
    expect(await keys.webhookOf(apiKey.id)).toBeNull();
    await expect(
      keys.setWebhook(apiKey.id, 'https://platform.example.com/x', 'whsec_y'),
    ).rejects.toBeInstanceOf(ApiKeyConflict);
  });

  it('reports an unknown key as not found', async () => {
    const unknown = `ak_${'f'.repeat(24)}`;
    await expect(keys.revoke(unknown, 'ops-bob')).rejects.toBeInstanceOf(ApiKeyNotFound);
    await expect(keys.revoke('not-an-id', 'ops-bob')).rejects.toBeInstanceOf(ApiKeyNotFound);
    await expect(
      keys.setWebhook(unknown, 'https://platform.example.com/x', 'whsec_z'),
    ).rejects.toBeInstanceOf(ApiKeyNotFound);
    expect(await keys.get(unknown)).toBeNull();
    expect(await keys.webhookOf(unknown)).toBeNull();
  });
});
