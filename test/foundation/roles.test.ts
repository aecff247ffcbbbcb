import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';

const restricted = '{ purchaseOrders { orderId } }';
const mutation = `mutation { setBasePrice(input: { sku: "SKU-AAA-000001", currency: "USD", amount: 12.5 }) { amount } }`;

describe('role-restricted operations at the gateway', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys.close());

  it('answers UNAUTHENTICATED with 401 to a restricted field without a token, and calls no subgraph', async () => {
    const before = await sys.subgraphRequests();
    const res = await sys.gql(restricted);
    expect(res.status).toBe(401);
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.data ?? null).toBeNull();
    expect(await sys.subgraphRequests()).toBe(before);
  });

  it('answers FORBIDDEN with 403 to a mutation without the required role, and calls no subgraph', async () => {
    const token = await sys.token(['orders:read']);
    const before = await sys.subgraphRequests();
    const res = await sys.gql(mutation, { token });
    expect(res.status).toBe(403);
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(res.errors?.[0]?.message).toContain('pricing:admin');
    expect(await sys.subgraphRequests()).toBe(before);
  });

  it('refuses the whole operation when one of its fields is restricted', async () => {
    const res = await sys.gql('{ products(skus: ["SKU-AAA-000001"]) { sku } purchaseOrders { orderId } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.data ?? null).toBeNull();
  });

  it('lets a caller with the role through', async () => {
    const token = await sys.token(['orders:read']);
    const res = await sys.gql(restricted, { token });
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(Array.isArray(res.data?.purchaseOrders)).toBe(true);
  });

  it('accepts roles granted through the OAuth scope claim as well', async () => {
    const { SignJWT, importJWK } = await import('jose');
    const { devSigningKey } = await import('../../lib/auth/jwt.ts');
    const { privateJwk } = await devSigningKey(sys.config.DATA_DIR);
    const token = await new SignJWT({ scope: 'openid orders:read' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(sys.config.AUTH_ISSUER)
      .setAudience(sys.config.AUTH_AUDIENCE)
      .setSubject('scoped')
      .setExpirationTime('5m')
      .sign(await importJWK(privateJwk, 'ES256'));
    const res = await sys.gql(restricted, { token });
    expect(res.errors).toBeUndefined();
  });

  it.each([
    ['a malformed Authorization header', 'Basic abc', 'not a bearer token'],
    ['a token signed by another key', 'Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', ''],
  ])('answers 401 UNAUTHENTICATED to %s, even for an open query', async (_label, header) => {
    const res = await fetch(`${sys.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: header },
      body: JSON.stringify({ query: '{ products(skus: []) { sku } }' }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses an expired token and one for another audience', async () => {
    const { SignJWT, importJWK } = await import('jose');
    const { devSigningKey } = await import('../../lib/auth/jwt.ts');
    const key = await importJWK((await devSigningKey(sys.config.DATA_DIR)).privateJwk, 'ES256');
    const base = () =>
      new SignJWT({ roles: ['orders:read'] })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(sys.config.AUTH_ISSUER);
    const expired = await base().setAudience(sys.config.AUTH_AUDIENCE).setExpirationTime(1000).sign(key);
    const otherAudience = await base().setAudience('someone-else').setExpirationTime('5m').sign(key);
    for (const token of [expired, otherAudience]) {
      const res = await sys.gql(restricted, { token });
      expect(res.status).toBe(401);
      expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
  });
});
