/**
 * The UCP endpoint's bearer checks: forged claims signed by the server key, a client bound to
 * another platform's profile, no credential, too narrow a scope (RFC 6750 challenges): a part of
 * ../hostile.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { platformProfile, startProfileServer, ucpCall } from '../../../harness/ucp-platform.ts';
import { BOTH, type HostileContext, LINE, READ, SPIFFE } from './support.ts';

export function ucpEndpointTests(o: HostileContext): void {
  describe('the UCP endpoint', () => {
    /** An access token signed with the authorization server's own key, with claims changed. */
    async function forged(change: Record<string, unknown>): Promise<string> {
      const ring = JSON.parse(
        readFileSync(join(o.sys.config.DATA_DIR, 'keys', 'oauth-signing.json'), 'utf8'),
      ) as {
        keys: { kid: string; privateJwk: JWK }[];
      };
      const k = ring.keys[0] as { kid: string; privateJwk: JWK };
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: o.issuer,
        aud: `${o.issuer}/ucp`,
        sub: 'buyer-admin',
        client_id: o.publicClient,
        scope: BOTH,
        grant_id: 'g-forged',
        spiffe_id: SPIFFE,
        agent_id: 'agent-forged-01',
        agent_scopes: ['orders:create'],
        ucp_profile: o.profiles.origin,
        iat: now,
        exp: now + 300,
        ...change,
      })
        .setProtectedHeader({ alg: 'ES256', kid: k.kid, typ: 'at+jwt' })
        .sign(await importJWK(k.privateJwk, 'ES256'));
    }

    it('takes a well-formed token signed by the server key (the forgery below changes one thing)', async () => {
      expect((await o.checkout(await forged({}))).status).toBe(201);
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
      const r = await o.checkout(await forged(change));
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: 'identity_required' });
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toContain(`realm="${o.issuer}"`);
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${o.issuer}/.well-known/oauth-protected-resource/ucp"`);
    });

    it("refuses a token whose client is bound to another platform's profile (403 profile_not_trusted)", async () => {
      const elsewhere = await startProfileServer();
      try {
        const url = elsewhere.set('/profile.json', platformProfile());
        const r = await ucpCall(
          o.sys.url,
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
      const r = await ucpCall(o.sys.url, { profileUrl: o.profileUrl }, 'POST', '/checkout-sessions', LINE);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: 'identity_required', messages: [{ code: 'identity_required' }] });
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer realm="/);
      expect(challenge).not.toContain('error=');
    });

    it('answers a token without checkout:manage 403 insufficient_scope naming the scope', async () => {
      const { access } = await o.publicTokens(READ);
      const r = await o.checkout(access);
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: 'insufficient_scope' });
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain('scope="dev.ucp.shopping.checkout:manage"');
    });
  });
}
