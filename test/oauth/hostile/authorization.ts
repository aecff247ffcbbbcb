/**
 * The authorization endpoint (RFC 9207's iss, code only, unknown clients, refusals sent back) and
 * the consent page (its roles, identities the buyer has no key for): a part of ../hostile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { link, pkcePair } from '../../../harness/oauth-platform.ts';
import { BOTH, type HostileContext, LOOPBACK, SPIFFE, WEB } from './support.ts';

export function authorizationTests(o: HostileContext): void {
  describe('the authorization endpoint', () => {
    it('puts iss (RFC 9207) and state in the response: the platform compares iss with the metadata issuer', async () => {
      const c = await o.publicCode();
      const meta = (await (await fetch(`${o.sys.url}/.well-known/oauth-authorization-server`)).json()) as {
        issuer: string;
      };
      expect(c.location.searchParams.get('iss')).toBe(meta.issuer);
      expect(meta.issuer).toBe(o.issuer);
    });

    const send = (params: Record<string, string>, clientId = o.confidential) =>
      fetch(
        `${o.sys.url}/oauth/authorize?${new URLSearchParams({
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
        ? (new URL(to).searchParams.get('error') ??
          new URLSearchParams(new URL(to).hash.slice(1)).get('error'))
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
      expect(to.searchParams.get('iss')).toBe(o.issuer);
      expect(to.searchParams.get('code')).toBeNull();
    });

    it('sends a refusal at the consent page back as access_denied', async () => {
      const r = await link({
        base: o.sys.url,
        clientId: o.publicClient,
        redirectUri: LOOPBACK,
        scope: BOTH,
        adminToken: o.admin,
      });
      expect(r.location.searchParams.get('error')).toBe('access_denied');
      expect(r.location.searchParams.get('iss')).toBe(o.issuer);
    });
  });
}

export function consentTests(o: HostileContext): void {
  describe('the consent page', () => {
    it.each([
      ['no token', undefined, 401],
      ['a token without agents:admin', ['orders:read'], 403],
    ])('refuses %s', async (_what, roles, status) => {
      const res = await fetch(`${o.sys.url}/console/link/x/details`, {
        headers: roles ? { authorization: `Bearer ${await o.sys.token(roles)}` } : {},
      });
      expect(res.status).toBe(status);
    });

    it('refuses a decision naming an identity the buyer has no key for (400)', async () => {
      await expect(
        link({
          base: o.sys.url,
          clientId: o.publicClient,
          redirectUri: LOOPBACK,
          scope: BOTH,
          adminToken: o.admin,
          spiffeId: `${SPIFFE}-unknown`,
        }),
      ).rejects.toThrow();
    });
  });
}
