/**
 * Identity linking end to end (docs/identity-linking.md): the metadata, a platform's code flow
 * with PKCE through the console's consent page, the token endpoint, and a UCP checkout made
 * with the access token acting as the linked agent identity.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readUcpDocuments } from '../../gateway/agent/ucp/schema/files.ts';
import { codeGrant, form, link } from '../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectUcp } from '../ucp/support/validate.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/linked-buyer';
const SCOPE = 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read';
const CART_SCOPE = 'dev.ucp.shopping.cart:manage';
const REDIRECT = 'http://127.0.0.1/callback';
const REGISTER = `mutation ($input: RegisterOAuthClientInput!) {
  registerOAuthClient(input: $input) { clientId name redirectUris tokenEndpointAuthMethod ucpProfile }
}`;
const LINKED =
  '{ linkedPlatforms { grantId clientId clientName linkedBy spiffeId agentId scopes revokedAt revokedBy } }';
const CLIENTS =
  '{ oauthClients { clientId name redirectUris tokenEndpointAuthMethod ucpProfile registeredAt registeredBy } }';
const REVOKE = 'mutation ($g: ID!) { revokeLinkedPlatform(grantId: $g) { grantId revokedAt revokedBy } }';

describe('identity linking', () => {
  let sys: TestSystem;
  let profiles: ProfileServer;
  let profileUrl: string;
  let admin: string;
  let publicClient: string;

  beforeAll(async () => {
    sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true' });
    profiles = await startProfileServer();
    profileUrl = profiles.set('/profile.json', platformProfile());
    await issueKey(sys, {
      spiffeId: SPIFFE,
      scopes: ['orders:create', 'orders:read'],
      ucpProfile: profiles.origin,
    });
    admin = await sys.token(['agents:admin'], 'buyer-admin');
    const reg = await sys.gql(REGISTER, {
      token: admin,
      variables: { input: { name: 'Agent app', redirectUris: [REDIRECT], ucpProfile: profiles.origin } },
    });
    expect(reg.errors).toBeUndefined();
    const client = (
      reg.data as { registerOAuthClient: { clientId: string; tokenEndpointAuthMethod: string } }
    ).registerOAuthClient;
    expect(client.tokenEndpointAuthMethod).toBe('none');
    publicClient = client.clientId;
  }, 60_000);

  /** A platform's access token of the code flow with `scope`, linked to SPIFFE (a random loopback port). */
  async function linkedToken(scope: string): Promise<string> {
    const redirectUri = `http://127.0.0.1:${49_152 + Math.floor(Math.random() * 1000)}/callback`;
    const r = await link({
      base: sys.url,
      clientId: publicClient,
      redirectUri,
      scope,
      adminToken: admin,
      spiffeId: SPIFFE,
    });
    const t = await form(
      `${sys.url}/oauth/token`,
      codeGrant(
        { code: r.location.searchParams.get('code') as string, redirectUri, verifier: r.verifier },
        publicClient,
      ),
    );
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(t.body.scope).toBe(scope);
    return String(t.body.access_token);
  }

  /** The platform's profile offering the cart (no fulfillment: a checkout is ready at once). */
  const cartProfile = () =>
    profiles.set('/cart-profile.json', platformProfile({ capabilities: ['checkout', 'order', 'cart'] }));

  afterAll(async () => {
    await profiles?.close();
    await sys?.close();
  });

  it('publishes RFC 8414 metadata with the UCP scopes, S256 and iss in the response', async () => {
    const res = await fetch(`${sys.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const m = (await res.json()) as Record<string, unknown>;
    expect(m.scopes_supported).toEqual(expect.arrayContaining([...SCOPE.split(' '), CART_SCOPE]));
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.token_endpoint_auth_methods_supported).toEqual(['private_key_jwt', 'none']);
    expect(m.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('publishes RFC 9728 metadata for the UCP endpoint at its well-known paths', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/ucp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const m = (await (await fetch(`${sys.url}${path}`)).json()) as Record<string, unknown>;
      expect(m.resource).toBe(
        `${sys.platform.config.PUBLIC_BASE_URL ?? `http://${sys.config.HOST}:${sys.config.PORT}`}/ucp`,
      );
      expect(m.authorization_servers).toHaveLength(1);
      expect(m.scopes_supported).toEqual(expect.arrayContaining(SCOPE.split(' ')));
    }
  });

  it('declares dev.ucp.common.identity_linking in /.well-known/ucp, valid against the vendored schema', async () => {
    const doc = (await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as {
      ucp: {
        capabilities: Record<
          string,
          { config: { scopes: Record<string, { description: { plain: string } }> } }[]
        >;
      };
    };
    expectUcp('business_profile', doc);
    const entry = doc.ucp.capabilities['dev.ucp.common.identity_linking']?.[0];
    expect(Object.keys(entry?.config.scopes ?? {}).sort()).toEqual([...SCOPE.split(' '), CART_SCOPE].sort());
    for (const s of Object.values(entry?.config.scopes ?? {}))
      expect(s.description.plain.length).toBeGreaterThan(10);
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    for (const d of readUcpDocuments()) ajv.addSchema(d.schema);
    const business = ajv.getSchema(
      'https://ucp.dev/schemas/common/identity_linking.json#/$defs/dev.ucp.common.identity_linking/business_schema',
    );
    expect(business?.(entry), JSON.stringify(business?.errors)).toBe(true);
  });

  it('links an account and checks out with the access token', async () => {
    const port = 49_152 + Math.floor(Math.random() * 1000);
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const r = await link({
      base: sys.url,
      clientId: publicClient,
      redirectUri,
      scope: SCOPE,
      adminToken: admin,
      spiffeId: SPIFFE,
    });
    expect(`${r.location.origin}${r.location.pathname}`).toBe(redirectUri);
    const issuer =
      sys.platform.config.PUBLIC_BASE_URL ?? `http://${sys.platform.config.HOST}:${sys.platform.config.PORT}`;
    expect(r.location.searchParams.get('iss')).toBe(issuer);
    expect(r.location.searchParams.get('state')).toBe(r.state);
    const code = r.location.searchParams.get('code') as string;
    const t = await form(
      `${sys.url}/oauth/token`,
      codeGrant({ code, redirectUri, verifier: r.verifier }, publicClient),
    );
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    const at = String(t.body.access_token);
    expect(decodeProtectedHeader(at).typ).toBe('at+jwt');
    const claims = decodeJwt(at);
    expect(claims).toMatchObject({ iss: issuer, client_id: publicClient, scope: SCOPE, spiffe_id: SPIFFE });
    const created = await ucpCall(sys.url, { key: at, profileUrl }, 'POST', '/checkout-sessions', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    // The buyer sees the link, revokes it, and the platform's token is refused at once.
    const listed = await sys.gql(LINKED, { token: admin });
    const links = (
      listed.data as {
        linkedPlatforms: { grantId: string; clientId: string; spiffeId: string; linkedBy: string }[];
      }
    ).linkedPlatforms;
    const mine = links.find((l) => l.grantId === claims.grant_id);
    expect(mine).toMatchObject({ clientId: publicClient, spiffeId: SPIFFE, linkedBy: 'buyer-admin' });
    const revoked = await sys.gql(REVOKE, { token: admin, variables: { g: claims.grant_id } });
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data).toMatchObject({ revokeLinkedPlatform: { revokedBy: 'buyer-admin' } });
    const after = await ucpCall(sys.url, { key: at, profileUrl }, 'POST', '/checkout-sessions', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
    });
    expect(after.status).toBe(401);
    const refreshed = await form(`${sys.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: String(t.body.refresh_token),
      client_id: publicClient,
    });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it("goes the issue's whole way: linked, a UCP cart built, converted, completed on account; revoked, refused", async () => {
    const as = { key: await linkedToken(`${SCOPE} ${CART_SCOPE}`), profileUrl: cartProfile() };
    const cart = await ucpCall(sys.url, as, 'POST', '/carts', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 2 }],
    });
    expect(cart.status, JSON.stringify(cart.body)).toBe(201);
    expectUcp('cart', cart.body);
    const checkout = await ucpCall(sys.url, as, 'POST', '/checkout-sessions', {
      cart_id: cart.body.id,
      line_items: [],
    });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    expect((checkout.body.line_items as { quantity: number }[]).map((l) => l.quantity)).toEqual([2]);
    const done = await ucpCall(sys.url, as, 'POST', `/checkout-sessions/${checkout.body.id}/complete`, {
      payment: purchaseOrderPayment('PO-LINKED-1'),
    });
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    // The order is the linked identity's: its owner reads it over the agent API.
    const orderId = (done.body.order as { id: string }).id;
    const own = await fetch(`${sys.url}/api/v2/procurement/orders/${orderId}`, {
      headers: { 'x-spiffe-id': SPIFFE },
    });
    expect(own.status).toBe(200);
    // The buyer revokes the link: the next cart is refused at once.
    const revoked = await sys.gql(REVOKE, { token: admin, variables: { g: decodeJwt(as.key).grant_id } });
    expect(revoked.errors).toBeUndefined();
    const after = await ucpCall(sys.url, as, 'POST', '/carts', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
    });
    expect(after.status).toBe(401);
  });

  it.each([
    ['checkout:manage alone builds no cart', SCOPE, 'POST', '/carts', CART_SCOPE],
    [
      'cart:manage alone creates no checkout',
      CART_SCOPE,
      'POST',
      '/checkout-sessions',
      'dev.ucp.shopping.checkout:manage',
    ],
  ] as const)(
    'gates carts on their own scope: %s (403 insufficient_scope, RFC 6750 challenge)',
    async (_what, scope, method, path, missing) => {
      const as = { key: await linkedToken(scope), profileUrl: cartProfile() };
      const r = await ucpCall(sys.url, as, method, path, {
        line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(403);
      expect(r.body).toMatchObject({
        code: 'insufficient_scope',
        messages: [{ code: 'insufficient_scope' }],
      });
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer realm="/);
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain(`scope="${missing}"`);
      expect(challenge).toContain('resource_metadata="');
    },
  );

  it('lets a token with cart:manage alone build, read, update and cancel a cart', async () => {
    const as = { key: await linkedToken(CART_SCOPE), profileUrl: cartProfile() };
    const created = await ucpCall(sys.url, as, 'POST', '/carts', {
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = String(created.body.id);
    const read = await ucpCall(sys.url, as, 'GET', `/carts/${id}`);
    expect(read.status).toBe(200);
    const updated = await ucpCall(sys.url, as, 'PUT', `/carts/${id}`, {
      id,
      line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 3 }],
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((updated.body.line_items as { quantity: number }[]).map((l) => l.quantity)).toEqual([3]);
    const cancelled = await ucpCall(sys.url, as, 'POST', `/carts/${id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
  });

  it.each([
    [
      'http to a non-loopback host',
      { name: 'P', redirectUris: ['http://platform.example/cb'], ucpProfile: 'https://p.example' },
      'redirectUris',
    ],
    ['no redirect URI', { name: 'P', redirectUris: [], ucpProfile: 'https://p.example' }, 'redirectUris'],
    [
      'a private key in jwks',
      {
        name: 'P',
        redirectUris: ['https://p.example/cb'],
        jwks: '{"keys":[{"kty":"EC","d":"x"}]}',
        ucpProfile: 'https://p.example',
      },
      'jwks',
    ],
    [
      'jwks that is not JSON',
      { name: 'P', redirectUris: ['https://p.example/cb'], jwks: '{', ucpProfile: 'https://p.example' },
      'jwks',
    ],
    [
      'an empty name',
      { name: ' ', redirectUris: ['https://p.example/cb'], ucpProfile: 'https://p.example' },
      'name',
    ],
  ])('refuses to register a client with %s (BAD_USER_INPUT)', async (_what, input, field) => {
    const r = await sys.gql(REGISTER, { token: admin, variables: { input } });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });

  it('registers clients and lists links for agents:admin only', async () => {
    const other = await sys.token(['orders:read'], 'someone');
    const reg = await sys.gql(REGISTER, {
      token: other,
      variables: { input: { name: 'P', redirectUris: [REDIRECT], ucpProfile: 'https://p.example' } },
    });
    expect(reg.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await sys.gql(LINKED, { token: other })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await sys.gql(LINKED)).errors?.[0]?.extensions?.code).toMatch(/UNAUTHENTICATED|FORBIDDEN/);
    expect((await sys.gql(CLIENTS, { token: other })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('lists the registered clients, newest first, with who registered them and when', async () => {
    const reg = await sys.gql(REGISTER, {
      token: await sys.token(['agents:admin'], 'ops-lister'),
      variables: {
        input: {
          name: 'Newest app',
          redirectUris: ['https://newest.example/cb'],
          ucpProfile: profiles.origin,
        },
      },
    });
    expect(reg.errors).toBeUndefined();
    const id = (reg.data as { registerOAuthClient: { clientId: string } }).registerOAuthClient.clientId;
    const list = await sys.gql(CLIENTS, { token: admin });
    expect(list.errors).toBeUndefined();
    const clients = (list.data as { oauthClients: Record<string, unknown>[] }).oauthClients;
    expect(clients[0]).toMatchObject({
      clientId: id,
      name: 'Newest app',
      redirectUris: ['https://newest.example/cb'],
      tokenEndpointAuthMethod: 'none',
      registeredBy: 'ops-lister',
    });
    expect(Date.parse(String(clients[0]?.registeredAt))).toBeGreaterThan(Date.now() - 60_000);
    expect(clients.map((c) => c.clientId)).toContain(publicClient);
  });
});
