/**
 * Identity linking's protocol-neutral rules (subgraphs/procurement/identity-linking/), pure and
 * fast: what a linked token may do, the revoked-grant set, client registration, and the RFC 6750
 * challenge the UCP edge writes.
 */
import { Script } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerChallenge } from '../../gateway/agent/ucp/identity.ts';
import { CONSENT_SCRIPT } from '../../gateway/oauth/consent-page.ts';
import { ClientInputInvalid, clientMetadata } from '../../subgraphs/procurement/identity-linking/clients.ts';
import {
  actingScopes,
  governingPolicy,
  RevokedGrants,
} from '../../subgraphs/procurement/identity-linking/links.ts';
import {
  parseScope,
  UCP_SCOPE_NAMES,
  UCP_SCOPE_OF,
  UCP_SCOPES,
} from '../../subgraphs/procurement/identity-linking/scopes.ts';
import type { SpendPolicy } from '../../subgraphs/procurement/spend/policy.ts';

const AGENT_SCOPES = ['catalog:read', 'orders:create', 'orders:read', 'orders:cancel', 'spend:read'];

describe('what a linked token may do', () => {
  it('never acts beyond the identity, nor beyond what its UCP scopes map to (property)', () => {
    fc.assert(
      fc.property(
        fc.subarray([...UCP_SCOPE_NAMES, 'dev.ucp.shopping.order:manage', 'openid']),
        fc.subarray(AGENT_SCOPES),
        (ucp, identity) => {
          const acting = actingScopes(ucp, identity);
          for (const s of acting) {
            expect(identity).toContain(s);
            const granting = UCP_SCOPES.filter((u) => u.agentScopes.includes(s)).map((u) => u.scope);
            expect(ucp.some((u) => granting.includes(u))).toBe(true);
          }
        },
      ),
    );
  });

  it.each([
    [['dev.ucp.shopping.checkout:manage'], ['orders:create', 'orders:read'], ['orders:create']],
    [['dev.ucp.shopping.order:read'], ['orders:create', 'orders:read'], ['orders:read']],
    [['dev.ucp.shopping.checkout:manage', 'dev.ucp.shopping.order:read'], ['orders:read'], ['orders:read']],
    [['dev.ucp.shopping.cart:manage'], AGENT_SCOPES, ['orders:create']],
    [['dev.ucp.shopping.cart:manage'], ['orders:read'], []],
  ])('maps %j on an identity holding %j to %j', (ucp, identity, expected) => {
    expect(actingScopes(ucp, identity)).toEqual(expected);
  });

  it('gates checkout, cart and order reading each on its own UCP scope, all listed as hard gates', () => {
    expect(UCP_SCOPE_OF).toEqual({
      checkout: 'dev.ucp.shopping.checkout:manage',
      cart: 'dev.ucp.shopping.cart:manage',
      order: 'dev.ucp.shopping.order:read',
    });
    for (const scope of Object.values(UCP_SCOPE_OF))
      expect(UCP_SCOPES.find((s) => s.scope === scope)?.gates).toBe(true);
  });

  it('keeps only the UCP scopes it knows from a scope string', () => {
    expect(parseScope('openid dev.ucp.shopping.order:read  dev.ucp.shopping.order:read x')).toEqual([
      'dev.ucp.shopping.order:read',
    ]);
    expect(parseScope(undefined)).toEqual([]);
  });
});

describe('the spend policy the consent page shows', () => {
  const policy = (subject: string): SpendPolicy =>
    ({ subject, currency: 'USD', period: 'month', budgetCents: 100 }) as SpendPolicy;
  const base = 'spiffe://example.org/ns/ai/sa/procurement-agent';
  it('is the most specific policy at or above the identity, on a segment boundary', () => {
    const all = [policy(base), policy(`${base}/buyer`), policy(`${base}/buyer-evil`)];
    expect(governingPolicy(`${base}/buyer`, all)?.subject).toBe(`${base}/buyer`);
    expect(governingPolicy(`${base}/buyer/sub`, all)?.subject).toBe(`${base}/buyer`);
    expect(governingPolicy(`${base}/other`, all)?.subject).toBe(base);
    expect(governingPolicy('spiffe://other.org/ns/ai/sa/procurement-agent', all)).toBeNull();
  });
});

describe('the revoked-grant set', () => {
  it('holds a grant until its last access token expires, then forgets it', () => {
    const set = new RevokedGrants();
    set.add('g1', 1000);
    set.add('g1', 500); // an earlier bound never shortens a later one
    expect(set.has('g1', 999)).toBe(true);
    expect(set.has('g2', 0)).toBe(false);
    expect(set.has('g1', 1000)).toBe(false);
    expect(set.size).toBe(0);
    set.add('g3', 10);
    set.prune(10);
    expect(set.size).toBe(0);
  });
});

describe('client registration', () => {
  it('registers loopback redirects as a native client (any port, RFC 8252) and https as web', () => {
    expect(
      clientMetadata({
        name: 'A',
        redirectUris: ['http://127.0.0.1/cb', 'http://[::1]/cb'],
        ucpProfile: 'https://p.example/',
      }),
    ).toMatchObject({
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      ucp_profile: 'https://p.example',
    });
    const key = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' };
    expect(
      clientMetadata({
        name: 'B',
        redirectUris: ['https://p.example/cb'],
        jwks: [key],
        ucpProfile: 'https://p.example/ucp/profile.json',
      }),
    ).toMatchObject({
      application_type: 'web',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key] },
    });
  });

  it('registers a jwks_uri as a confidential client whose keys are fetched (private_key_jwt, no jwks)', () => {
    const m = clientMetadata({
      name: 'C',
      redirectUris: ['https://p.example/cb'],
      jwksUri: ' https://p.example/.well-known/jwks.json ',
      ucpProfile: 'https://p.example',
    });
    expect(m).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://p.example/.well-known/jwks.json',
    });
    expect(m).not.toHaveProperty('jwks');
    // Insecure profiles allowed (tests, development): a loopback http jwks_uri is taken.
    expect(
      clientMetadata(
        {
          name: 'C',
          redirectUris: ['https://p.example/cb'],
          jwksUri: 'http://127.0.0.1:8081/jwks',
          ucpProfile: 'https://p.example',
        },
        { allowInsecureProfiles: true },
      ).jwks_uri,
    ).toBe('http://127.0.0.1:8081/jwks');
  });

  it.each([
    ['http to a public host', { redirectUris: ['http://p.example/cb'] }, 'redirectUris'],
    ['localhost by name', { redirectUris: ['http://localhost/cb'] }, 'redirectUris'],
    ['a fragment', { redirectUris: ['https://p.example/cb#x'] }, 'redirectUris'],
    ['credentials', { redirectUris: ['https://u:p@p.example/cb'] }, 'redirectUris'],
    [
      'loopback beside https',
      { redirectUris: ['http://127.0.0.1/cb', 'https://p.example/cb'] },
      'redirectUris',
    ],
    [
      'eleven redirects',
      { redirectUris: Array.from({ length: 11 }, (_, i) => `https://p.example/${i}`) },
      'redirectUris',
    ],
    ['a relative redirect', { redirectUris: ['/cb'] }, 'redirectUris'],
    ['a private EC key', { jwks: [{ kty: 'EC', d: 'secret' }] }, 'jwks'],
    ['a symmetric key', { jwks: [{ kty: 'oct', k: 'secret' }] }, 'jwks'],
    ['jwks and jwksUri both', { jwks: [{ kty: 'EC' }], jwksUri: 'https://p.example/jwks' }, 'jwksUri'],
    ['an http jwksUri', { jwksUri: 'http://p.example/jwks' }, 'jwksUri'],
    ['a loopback jwksUri', { jwksUri: 'https://127.0.0.1/jwks' }, 'jwksUri'],
    ['a private-network jwksUri', { jwksUri: 'https://10.0.0.7/jwks' }, 'jwksUri'],
    ['a jwksUri with credentials', { jwksUri: 'https://u:p@p.example/jwks' }, 'jwksUri'],
    ['a jwksUri that is no URL', { jwksUri: 'keys.json' }, 'jwksUri'],
    ['a control character in the name', { name: 'A\u0007' }, 'name'],
    ['no UCP profile', { ucpProfile: '' }, 'ucpProfile'],
    ['an http UCP profile', { ucpProfile: 'http://p.example/profile.json' }, 'ucpProfile'],
  ])('refuses %s', (_what, change, field) => {
    const input = {
      name: 'P',
      redirectUris: ['https://p.example/cb'],
      ucpProfile: 'https://p.example',
      ...change,
    };
    expect(() => clientMetadata(input)).toThrow(ClientInputInvalid);
    try {
      clientMetadata(input);
    } catch (e) {
      expect((e as ClientInputInvalid).field).toBe(field);
    }
  });
});

describe('the RFC 6750 challenge', () => {
  it('quotes every parameter and lets no value break out of its quotes', () => {
    const c = bearerChallenge(
      {
        issuer: 'https://shop.example',
        resourceMetadata: 'https://shop.example/.well-known/oauth-protected-resource/ucp',
      },
      { error: 'invalid_token', error_description: 'bad "token", realm="evil"' },
    );
    expect(c).toBe(
      'Bearer realm="https://shop.example", error="invalid_token", error_description="bad token, realm=evil", resource_metadata="https://shop.example/.well-known/oauth-protected-resource/ucp"',
    );
  });
});

describe('the access-token check', () => {
  it('refuses a token it verified before once its grant is revoked or it expires', async () => {
    const { exportJWK, generateKeyPair, SignJWT } = await import('jose');
    const { accessTokenVerifier } = await import('../../gateway/oauth/access-token.ts');
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    let now = 1_800_000_000_000;
    const revoked = new RevokedGrants();
    const v = accessTokenVerifier({
      issuer: 'https://shop.example',
      audience: 'https://shop.example/ucp',
      jwks: [jwk],
      revoked,
      clock: { now: () => now },
    });
    const sign = (grant: string) =>
      new SignJWT({
        client_id: 'pc_1',
        grant_id: grant,
        spiffe_id: 'spiffe://example.org/ns/ai/sa/procurement-agent/x',
        agent_id: 'agent-x-000001',
        agent_scopes: ['orders:create', 'orders:read'],
        scope: 'dev.ucp.shopping.checkout:manage',
        ucp_profile: 'https://p.example',
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
        .setIssuer('https://shop.example')
        .setAudience('https://shop.example/ucp')
        .setSubject('buyer-admin')
        .setIssuedAt(now / 1000)
        .setExpirationTime(now / 1000 + 600)
        .sign(privateKey);
    const a = await sign('g-a');
    const b = await sign('g-b');
    const first = await v.verify(a);
    expect(first).toMatchObject({ ok: true, caller: { agentScopes: ['orders:create'], grantId: 'g-a' } });
    expect((await v.verify(a)).ok).toBe(true);
    revoked.add('g-a', now + 600_000);
    expect(await v.verify(a)).toMatchObject({ ok: false, reason: 'access token of a revoked grant' });
    expect((await v.verify(b)).ok).toBe(true);
    now += 600_000;
    expect((await v.verify(b)).ok).toBe(false);
    expect((await v.verify('not.a.token')).ok).toBe(false);
  });
});

describe('the consent page script', () => {
  it('compiles (a syntax error would leave the page blank; consent.browser.test.ts runs it)', () => {
    expect(() => new Script(CONSENT_SCRIPT)).not.toThrow();
  });
});
