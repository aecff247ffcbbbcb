/**
 * A confidential platform's jwks_uri is fetched by the authorization server, so the fetch is
 * SSRF-guarded as a webhook's or a profile's is (gateway/oauth/provider.ts, httpOptions): a
 * name that resolves to a loopback or private address is never connected to. Registration
 * already refuses such a URL; here the client row names `localhost` directly, as a name
 * re-pointed after registration would, and the system runs without UCP_PROFILE_ALLOW_INSECURE.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeGrant, form, link, platformKey } from '../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { issueKey } from '../acp/support/acp.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/jwks-uri-buyer';
const WEB = 'https://platform.example/cb';
const ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let sys: TestSystem;
let jwksServer: Server;
let fetches = 0;
let key: Awaited<ReturnType<typeof platformKey>>;

beforeAll(async () => {
  sys = await startEmbedded();
  key = await platformKey();
  jwksServer = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
  });
  await new Promise<void>((ok) => jwksServer.listen(0, '127.0.0.1', ok));
  await issueKey(sys, { spiffeId: SPIFFE, scopes: ['orders:create'] });
}, 60_000);

afterAll(async () => {
  await new Promise((ok) => jwksServer?.close(ok));
  await sys?.close();
});

describe("a client's jwks_uri", () => {
  it('is refused at registration when it points to a loopback address', async () => {
    const r = await sys.gql(
      'mutation ($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { clientId } }',
      {
        token: await sys.token(['agents:admin'], 'ops'),
        variables: {
          i: {
            name: 'P',
            redirectUris: [WEB],
            jwksUri: `https://localhost:${(jwksServer.address() as AddressInfo).port}/jwks`,
            ucpProfile: 'https://platform.example',
          },
        },
      },
    );
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'jwksUri' });
  });

  it('is not fetched from a name that resolves to a loopback address: the client is refused (invalid_client)', async () => {
    const clientId = 'pc_jwksuriloopback000000000';
    const jwksUri = `http://localhost:${(jwksServer.address() as AddressInfo).port}/jwks`;
    await sys.platform.db.query("INSERT INTO oauth_models (model, id, payload) VALUES ('Client', $1, $2)", [
      clientId,
      JSON.stringify({
        client_id: clientId,
        client_name: 'Re-pointed platform',
        redirect_uris: [WEB],
        application_type: 'web',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        ucp_profile: 'https://platform.example',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: jwksUri,
      }),
    ]);
    const admin = await sys.token(['agents:admin'], 'buyer-admin');
    const r = await link({
      base: sys.url,
      clientId,
      redirectUri: WEB,
      scope: 'dev.ucp.shopping.checkout:manage',
      adminToken: admin,
      spiffeId: SPIFFE,
    });
    const code = r.location.searchParams.get('code');
    expect(code, r.location.href).toBeTruthy();
    const issuer = `http://${sys.config.HOST}:${sys.config.PORT}`;
    const t = await form(`${sys.url}/oauth/token`, {
      ...codeGrant({ code: code as string, redirectUri: WEB, verifier: r.verifier }),
      client_assertion_type: ASSERTION,
      client_assertion: await key.sign(clientId, issuer),
    });
    expect(t.status, JSON.stringify(t.body)).toBe(401);
    expect(t.body.error).toBe('invalid_client');
    expect(fetches).toBe(0);
  });
});
