/**
 * The token endpoint: PKCE and redirect_uri bound to the code, replayed codes, refresh token
 * rotation and reuse, scope escalation, private_key_jwt, revocation (RFC 6749, 7009, 7636, 9700):
 * a part of ../hostile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { codeGrant, link, pkcePair } from '../../../harness/oauth-platform.ts';
import { ASSERTION, BOTH, type HostileContext, READ, SPIFFE, WEB } from './support.ts';

export function tokenTests(o: HostileContext): void {
  describe('the token endpoint', () => {
    it.each([
      ['without code_verifier', { code_verifier: undefined }],
      ['with the wrong code_verifier', { code_verifier: pkcePair().verifier }],
      ['with another redirect_uri', { redirect_uri: 'http://127.0.0.1/other' }],
    ] as [string, Record<string, string | undefined>][])(
      'refuses a code %s (400 invalid_grant)',
      async (_what, change) => {
        const c = await o.publicCode();
        const t = await o.token({ ...codeGrant(c, o.publicClient), ...change });
        expect(t.status).toBe(400);
        expect(t.body.error).toBe('invalid_grant');
      },
    );

    it('refuses a replayed code (400 invalid_grant) and revokes what the first exchange issued', async () => {
      const c = await o.publicCode();
      const params = codeGrant(c, o.publicClient);
      const first = await o.token(params);
      expect(first.status).toBe(200);
      expect((await o.checkout(String(first.body.access_token))).status).toBe(201);
      const again = await o.token(params);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
      const after = await o.checkout(String(first.body.access_token));
      expect(after.status).toBe(401);
      expect(after.body.code).toBe('identity_required');
    });

    it('rotates refresh tokens; a refresh token used twice is refused and the grant revoked', async () => {
      const { refresh } = await o.publicTokens();
      const once = await o.token({
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: o.publicClient,
      });
      expect(once.status).toBe(200);
      expect(once.body.refresh_token).not.toBe(refresh);
      expect((await o.checkout(String(once.body.access_token))).status).toBe(201);
      const twice = await o.token({
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: o.publicClient,
      });
      expect(twice.status).toBe(400);
      expect(twice.body.error).toBe('invalid_grant');
      expect((await o.checkout(String(once.body.access_token))).status).toBe(401);
      const rotated = await o.token({
        grant_type: 'refresh_token',
        refresh_token: String(once.body.refresh_token),
        client_id: o.publicClient,
      });
      expect(rotated.body.error).toBe('invalid_grant');
    });

    it('refuses scope escalation at refresh (400 invalid_scope)', async () => {
      const { refresh } = await o.publicTokens(READ);
      const t = await o.token({
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: o.publicClient,
        scope: BOTH,
      });
      expect(t.status).toBe(400);
      expect(t.body.error).toBe('invalid_scope');
    });

    it('takes private_key_jwt by the client key, and refuses another client key or none (401 invalid_client)', async () => {
      const r = await link({
        base: o.sys.url,
        clientId: o.confidential,
        redirectUri: WEB,
        scope: BOTH,
        adminToken: o.admin,
        spiffeId: SPIFFE,
      });
      const code = r.location.searchParams.get('code') as string;
      const base = codeGrant({ code, redirectUri: WEB, verifier: r.verifier });
      const cases: [string, Record<string, string>, number, string][] = [
        [
          "C's id with D's key",
          {
            client_id: o.confidential,
            client_assertion_type: ASSERTION,
            client_assertion: await o.keyD.sign(o.confidential, o.issuer),
          },
          401,
          'invalid_client',
        ],
        ['no authentication', { client_id: o.confidential }, 401, 'invalid_client'],
        // D authenticates as itself: the code is C's, so the grant is refused, not the client.
        [
          "D with its own key and C's code",
          { client_assertion_type: ASSERTION, client_assertion: await o.keyD.sign(o.other, o.issuer) },
          400,
          'invalid_grant',
        ],
      ];
      for (const [what, auth, status, error] of cases) {
        const t = await o.token({ ...base, ...auth });
        expect(t.status, what).toBe(status);
        expect(t.body.error, what).toBe(error);
      }
      const ok = await o.token({
        ...base,
        client_assertion_type: ASSERTION,
        client_assertion: await o.keyC.sign(o.confidential, o.issuer),
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    });

    it('revokes a refresh token (RFC 7009): its access tokens are refused at once', async () => {
      const { access, refresh } = await o.publicTokens();
      expect((await o.checkout(access)).status).toBe(201);
      const r = await o.revoke({
        token: refresh,
        token_type_hint: 'refresh_token',
        client_id: o.publicClient,
      });
      expect(r.status).toBe(200);
      const after = await o.checkout(access);
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });
  });
}
