/**
 * Identity linking against the attacks the specifications name (RFC 6749 §10, RFC 7636, RFC 9700,
 * identity-linking.md "Security Considerations"): each refused with a clear 4xx and RFC 6749's
 * error body (token endpoint) or a 401/403 with an RFC 6750 challenge (UCP endpoint).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, link, pkcePair, platformKey } from '../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { identityLinkingFor } from '../../subgraphs/procurement/identity-linking/service.ts';
import { issueKey } from '../acp/support/acp.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/hostile-buyer';
const BOTH = 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read';
const READ = 'dev.ucp.shopping.order:read';
const LOOPBACK = 'http://127.0.0.1/cb';
const WEB = 'https://platform.example/cb';
const ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The profile server is on loopback over http: allowed as the system runs (UCP_PROFILE_ALLOW_INSECURE). */
const INSECURE = { allowInsecureProfiles: true };
const LINE = { line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }] };

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let admin: string;
let issuer: string;
let publicClient: string;
let confidential: string;
let other: string;
let keyC: Awaited<ReturnType<typeof platformKey>>;
let keyD: Awaited<ReturnType<typeof platformKey>>;

beforeAll(async () => {
  sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true' });
  issuer = `http://${sys.config.HOST}:${sys.config.PORT}`;
  profiles = await startProfileServer();
  profileUrl = profiles.set('/profile.json', platformProfile());
  await issueKey(sys, {
    spiffeId: SPIFFE,
    scopes: ['orders:create', 'orders:read'],
    ucpProfile: profiles.origin,
  });
  admin = await sys.token(['agents:admin'], 'buyer-admin');
  const linking = await identityLinkingFor(sys.platform);
  publicClient = String(
    (
      await linking.registerClient(
        { name: 'Agent app', redirectUris: [LOOPBACK], ucpProfile: profiles.origin },
        INSECURE,
      )
    ).client_id,
  );
  keyC = await platformKey();
  keyD = await platformKey();
  const reg = async (name: string, k: typeof keyC) =>
    String(
      (
        await linking.registerClient(
          { name, redirectUris: [WEB], jwks: [k.publicJwk], ucpProfile: profiles.origin },
          INSECURE,
        )
      ).client_id,
    );
  confidential = await reg('Platform C', keyC);
  other = await reg('Platform D', keyD);
}, 60_000);

afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

const token = (params: Record<string, string | undefined>) => form(`${sys.url}/oauth/token`, params);
const revoke = (params: Record<string, string | undefined>) => form(`${sys.url}/oauth/revoke`, params);
const checkout = (bearer: string) =>
  ucpCall(sys.url, { key: bearer, profileUrl }, 'POST', '/checkout-sessions', LINE);

/** A fresh code for the public client at an ephemeral loopback port. */
async function publicCode(scope = BOTH) {
  const redirectUri = `http://127.0.0.1:${50_000 + Math.floor(Math.random() * 10_000)}/cb`;
  const r = await link({
    base: sys.url,
    clientId: publicClient,
    redirectUri,
    scope,
    adminToken: admin,
    spiffeId: SPIFFE,
  });
  return {
    code: r.location.searchParams.get('code') as string,
    verifier: r.verifier,
    redirectUri,
    location: r.location,
  };
}

async function publicTokens(scope = BOTH) {
  const c = await publicCode(scope);
  const t = await token({
    grant_type: 'authorization_code',
    code: c.code,
    redirect_uri: c.redirectUri,
    code_verifier: c.verifier,
    client_id: publicClient,
  });
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  return { access: String(t.body.access_token), refresh: String(t.body.refresh_token) };
}

describe('the authorization endpoint', () => {
  it('puts iss (RFC 9207) and state in the response: the platform compares iss with the metadata issuer', async () => {
    const c = await publicCode();
    const meta = (await (await fetch(`${sys.url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
    };
    expect(c.location.searchParams.get('iss')).toBe(meta.issuer);
    expect(meta.issuer).toBe(issuer);
  });

  const send = (params: Record<string, string>, clientId = confidential) =>
    fetch(
      `${sys.url}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: WEB,
        scope: BOTH,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        state: 's1',
        ...params,
      })}`,
      { redirect: 'manual' },
    );

  it.each([
    ['a trailing slash', `${WEB}/`],
    ['another port (not loopback)', 'https://platform.example:8443/cb'],
    ['another host', 'https://platform.example.evil/cb'],
    ['a loopback redirect for a web client', 'http://127.0.0.1:8080/cb'],
  ])(
    'refuses a redirect_uri with %s without redirecting (400 invalid_redirect_uri)',
    async (_what, redirectUri) => {
      const res = await send({ redirect_uri: redirectUri });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    },
  );

  it('refuses the implicit flow (response_type=token): code only', async () => {
    const res = await send({ response_type: 'token' });
    expect(res.status).toBeGreaterThanOrEqual(300);
    const to = res.headers.get('location');
    const error = to
      ? (new URL(to).searchParams.get('error') ?? new URLSearchParams(new URL(to).hash.slice(1)).get('error'))
      : ((await res.json()) as { error: string }).error;
    expect(error).toBe('unsupported_response_type');
  });

  it('refuses an unknown client without redirecting (400 invalid_client)', async () => {
    const res = await send({}, 'pc_000000000000000000000000');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it.each([
    ['plain PKCE', { code_challenge_method: 'plain' }],
    ['no code_challenge', { code_challenge: '' }],
  ])('sends %s back to the platform as an error with iss', async (_what, params) => {
    const res = await send(params as Record<string, string>);
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location') ?? '');
    expect(`${to.origin}${to.pathname}`).toBe(WEB);
    expect(to.searchParams.get('error')).toBe('invalid_request');
    expect(to.searchParams.get('iss')).toBe(issuer);
    expect(to.searchParams.get('code')).toBeNull();
  });

  it('sends a refusal at the consent page back as access_denied', async () => {
    const r = await link({
      base: sys.url,
      clientId: publicClient,
      redirectUri: LOOPBACK,
      scope: BOTH,
      adminToken: admin,
    });
    expect(r.location.searchParams.get('error')).toBe('access_denied');
    expect(r.location.searchParams.get('iss')).toBe(issuer);
  });
});

describe('the token endpoint', () => {
  it.each([
    ['without code_verifier', { code_verifier: undefined }],
    ['with the wrong code_verifier', { code_verifier: pkcePair().verifier }],
    ['with another redirect_uri', { redirect_uri: 'http://127.0.0.1/other' }],
  ] as [string, Record<string, string | undefined>][])(
    'refuses a code %s (400 invalid_grant)',
    async (_what, change) => {
      const c = await publicCode();
      const t = await token({
        grant_type: 'authorization_code',
        code: c.code,
        redirect_uri: c.redirectUri,
        code_verifier: c.verifier,
        client_id: publicClient,
        ...change,
      });
      expect(t.status).toBe(400);
      expect(t.body.error).toBe('invalid_grant');
    },
  );

  it('refuses a replayed code (400 invalid_grant) and revokes what the first exchange issued', async () => {
    const c = await publicCode();
    const params = {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
      client_id: publicClient,
    };
    const first = await token(params);
    expect(first.status).toBe(200);
    expect((await checkout(String(first.body.access_token))).status).toBe(201);
    const again = await token(params);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const after = await checkout(String(first.body.access_token));
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('identity_required');
  });

  it('rotates refresh tokens; a refresh token used twice is refused and the grant revoked', async () => {
    const { refresh } = await publicTokens();
    const once = await token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: publicClient,
    });
    expect(once.status).toBe(200);
    expect(once.body.refresh_token).not.toBe(refresh);
    expect((await checkout(String(once.body.access_token))).status).toBe(201);
    const twice = await token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: publicClient,
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('invalid_grant');
    expect((await checkout(String(once.body.access_token))).status).toBe(401);
    const rotated = await token({
      grant_type: 'refresh_token',
      refresh_token: String(once.body.refresh_token),
      client_id: publicClient,
    });
    expect(rotated.body.error).toBe('invalid_grant');
  });

  it('refuses scope escalation at refresh (400 invalid_scope)', async () => {
    const { refresh } = await publicTokens(READ);
    const t = await token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: publicClient,
      scope: BOTH,
    });
    expect(t.status).toBe(400);
    expect(t.body.error).toBe('invalid_scope');
  });

  it('takes private_key_jwt by the client key, and refuses another client key or none (401 invalid_client)', async () => {
    const r = await link({
      base: sys.url,
      clientId: confidential,
      redirectUri: WEB,
      scope: BOTH,
      adminToken: admin,
      spiffeId: SPIFFE,
    });
    const code = r.location.searchParams.get('code') as string;
    const base = { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: r.verifier };
    const cases: [string, Record<string, string>, number, string][] = [
      [
        "C's id with D's key",
        {
          client_id: confidential,
          client_assertion_type: ASSERTION,
          client_assertion: await keyD.sign(confidential, issuer),
        },
        401,
        'invalid_client',
      ],
      ['no authentication', { client_id: confidential }, 401, 'invalid_client'],
      // D authenticates as itself: the code is C's, so the grant is refused, not the client.
      [
        "D with its own key and C's code",
        { client_assertion_type: ASSERTION, client_assertion: await keyD.sign(other, issuer) },
        400,
        'invalid_grant',
      ],
    ];
    for (const [what, auth, status, error] of cases) {
      const t = await token({ ...base, ...auth });
      expect(t.status, what).toBe(status);
      expect(t.body.error, what).toBe(error);
    }
    const ok = await token({
      ...base,
      client_assertion_type: ASSERTION,
      client_assertion: await keyC.sign(confidential, issuer),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('revokes a refresh token (RFC 7009): its access tokens are refused at once', async () => {
    const { access, refresh } = await publicTokens();
    expect((await checkout(access)).status).toBe(201);
    const r = await revoke({ token: refresh, token_type_hint: 'refresh_token', client_id: publicClient });
    expect(r.status).toBe(200);
    const after = await checkout(access);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

describe('the UCP endpoint', () => {
  /** An access token signed with the authorization server's own key, with claims changed. */
  async function forged(change: Record<string, unknown>): Promise<string> {
    const ring = JSON.parse(
      readFileSync(join(sys.config.DATA_DIR, 'keys', 'oauth-signing.json'), 'utf8'),
    ) as {
      keys: { kid: string; privateJwk: JWK }[];
    };
    const k = ring.keys[0] as { kid: string; privateJwk: JWK };
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: issuer,
      aud: `${issuer}/ucp`,
      sub: 'buyer-admin',
      client_id: publicClient,
      scope: BOTH,
      grant_id: 'g-forged',
      spiffe_id: SPIFFE,
      agent_id: 'agent-forged-01',
      agent_scopes: ['orders:create'],
      ucp_profile: profiles.origin,
      iat: now,
      exp: now + 300,
      ...change,
    })
      .setProtectedHeader({ alg: 'ES256', kid: k.kid, typ: 'at+jwt' })
      .sign(await importJWK(k.privateJwk, 'ES256'));
  }

  it('takes a well-formed token signed by the server key (the forgery below changes one thing)', async () => {
    expect((await checkout(await forged({}))).status).toBe(201);
  });

  it.each([
    ['another audience', { aud: 'https://other.example/ucp' }],
    ['another issuer', { iss: 'https://evil.example' }],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 1 }],
    ['no client_id', { client_id: undefined }],
    ['no profile binding', { ucp_profile: undefined }],
    [
      'an identity outside the trust domains',
      { spiffe_id: 'spiffe://evil.example/ns/ai/sa/procurement-agent' },
    ],
  ])('refuses %s: 401 identity_required with error="invalid_token"', async (_what, change) => {
    const r = await checkout(await forged(change));
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'identity_required' });
    const challenge = r.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`realm="${issuer}"`);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource/ucp"`);
  });

  it("refuses a token whose client is bound to another platform's profile (403 profile_not_trusted)", async () => {
    const elsewhere = await startProfileServer();
    try {
      const url = elsewhere.set('/profile.json', platformProfile());
      const r = await ucpCall(
        sys.url,
        { key: await forged({}), profileUrl: url },
        'POST',
        '/checkout-sessions',
        LINE,
      );
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: 'profile_not_trusted' });
      expect(elsewhere.hits('/profile.json')).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('asks for identity without a credential: 401 identity_required, no error in the challenge', async () => {
    const r = await ucpCall(sys.url, { profileUrl }, 'POST', '/checkout-sessions', LINE);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'identity_required', messages: [{ code: 'identity_required' }] });
    const challenge = r.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="/);
    expect(challenge).not.toContain('error=');
  });

  it('answers a token without checkout:manage 403 insufficient_scope naming the scope', async () => {
    const { access } = await publicTokens(READ);
    const r = await checkout(access);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'insufficient_scope' });
    const challenge = r.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="dev.ucp.shopping.checkout:manage"');
  });
});

describe('the consent page', () => {
  it.each([
    ['no token', undefined, 401],
    ['a token without agents:admin', ['orders:read'], 403],
  ])('refuses %s', async (_what, roles, status) => {
    const res = await fetch(`${sys.url}/console/link/x/details`, {
      headers: roles ? { authorization: `Bearer ${await sys.token(roles)}` } : {},
    });
    expect(res.status).toBe(status);
  });

  it('refuses a decision naming an identity the buyer has no key for (400)', async () => {
    await expect(
      link({
        base: sys.url,
        clientId: publicClient,
        redirectUri: LOOPBACK,
        scope: BOTH,
        adminToken: admin,
        spiffeId: `${SPIFFE}-unknown`,
      }),
    ).rejects.toThrow();
  });
});
