/**
 * Identity linking on the distributed topology: procurement, pricing and promotions in their own
 * processes, two gateway replicas on one PostgreSQL and Redis. A code issued through one replica
 * is redeemed at the other, a token works on both, and a revocation made anywhere (the buyer's,
 * in the procurement process; a reused refresh token at one replica) is refused by every replica
 * at once: the revoked set is fed by the event on Redis Streams, not by a lookup per request.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedSystem, startDistributed } from '../../harness/distributed.ts';
import { codeGrant, form, link } from '../../harness/oauth-platform.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/linked-distributed';
const SCOPE = 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read';
const LINE = { line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }] };

let sys: DistributedSystem;
let profiles: ProfileServer;
let profileUrl: string;
let admin: string;
let clientId: string;

beforeAll(async () => {
  sys = await startDistributed({ label: 'oauth', env: { UCP_PROFILE_ALLOW_INSECURE: 'true' } });
  profiles = await startProfileServer();
  profileUrl = profiles.set('/profile.json', platformProfile());
  await issueKey(sys, {
    spiffeId: SPIFFE,
    scopes: ['orders:create', 'orders:read'],
    ucpProfile: profiles.origin,
  });
  admin = await sys.token(['agents:admin'], 'buyer-admin');
  const reg = await sys.gql(
    'mutation ($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { clientId } }',
    {
      token: admin,
      variables: {
        i: { name: 'Agent app', redirectUris: ['http://127.0.0.1/cb'], ucpProfile: profiles.origin },
      },
    },
  );
  expect(reg.errors).toBeUndefined();
  clientId = (reg.data as { registerOAuthClient: { clientId: string } }).registerOAuthClient.clientId;
}, 180_000);

afterAll(async () => {
  await profiles?.close();
  await sys?.close();
}, 60_000);

const [A, B] = [0, 1];
const url = (i: number) => sys.gateways[i] as string;
const checkout = (i: number, bearer: string) =>
  ucpCall(url(i), { key: bearer, profileUrl }, 'POST', '/checkout-sessions', LINE);

/** Links through replica A and redeems the code at replica B. */
async function tokens() {
  const redirectUri = `http://127.0.0.1:${51_000 + Math.floor(Math.random() * 9000)}/cb`;
  const r = await link({
    base: url(A),
    clientId,
    redirectUri,
    scope: SCOPE,
    adminToken: admin,
    spiffeId: SPIFFE,
  });
  const t = await form(
    `${url(B)}/oauth/token`,
    codeGrant(
      { code: r.location.searchParams.get('code') ?? '', redirectUri, verifier: r.verifier },
      clientId,
    ),
  );
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  return { access: String(t.body.access_token), refresh: String(t.body.refresh_token) };
}

/** Polls until the replica refuses the token (the event's delivery), at most 3 s. */
async function refusedBy(i: number, bearer: string): Promise<number> {
  const until = Date.now() + 3000;
  for (;;) {
    const r = await ucpCall(
      url(i),
      { key: bearer, profileUrl },
      'GET',
      '/orders/ord_00000000000000000000000000000000',
    );
    if (r.status === 401 || Date.now() > until) return r.status;
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

describe('identity linking, distributed', () => {
  it('redeems at one replica a code issued through the other; the token works on both', async () => {
    const { access } = await tokens();
    expect((await checkout(A, access)).status).toBe(201);
    expect((await checkout(B, access)).status).toBe(201);
  });

  it("refuses the token on every replica once the buyer revokes the link (procurement's event)", async () => {
    const { access } = await tokens();
    expect((await checkout(B, access)).status).toBe(201);
    const revoked = await sys.gql('mutation ($g: ID!) { revokeLinkedPlatform(grantId: $g) { revokedAt } }', {
      token: admin,
      variables: { g: decodeJwt(access).grant_id },
    });
    expect(revoked.errors).toBeUndefined();
    expect(await refusedBy(A, access)).toBe(401);
    expect(await refusedBy(B, access)).toBe(401);
  });

  it('refuses on replica A the tokens of a grant revoked at replica B (a reused refresh token)', async () => {
    const { refresh } = await tokens();
    const once = await form(`${url(B)}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: clientId,
    });
    expect(once.status).toBe(200);
    const access = String(once.body.access_token);
    expect((await checkout(A, access)).status).toBe(201);
    const twice = await form(`${url(B)}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: clientId,
    });
    expect(twice.body.error).toBe('invalid_grant');
    expect(await refusedBy(A, access)).toBe(401);
  });
});
