/**
 * Mutual TLS with real certificates made by the test (support/certs.ts): the server requires
 * a client certificate of the trust bundle and takes the agent identity from its single URI
 * SAN; a disagreeing X-Spiffe-Id header is refused.
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT_ID, type Certificates, makeCertificates, type Pem } from './support/certs.ts';

const body = JSON.stringify({
  agent_id: 'agent-mtls-01',
  sku: 'SKU-TLS-000001',
  quantity: 1,
  max_budget_usd: 12.5,
});

let certs: Certificates;
const agents: Agent[] = [];

function client(identity?: Pem): Agent {
  const a = new Agent({
    connect: { ca: certs.ca.cert, ...(identity ? { cert: identity.cert, key: identity.key } : {}) },
  });
  agents.push(a);
  return a;
}

async function post(sys: TestSystem, identity: Pem | undefined, headers: Record<string, string> = {}) {
  const res = await request(`${sys.url}/api/v2/procurement/orders`, {
    method: 'POST',
    dispatcher: client(identity),
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const tlsEnv = () => ({
  TLS_CERT_FILE: certs.server.certFile,
  TLS_KEY_FILE: certs.server.keyFile,
  TLS_CA_FILE: certs.ca.certFile,
});

beforeAll(() => {
  certs = makeCertificates();
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
});

describe('mutual TLS, client certificate required', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded(tlsEnv());
  });
  afterAll(() => sys.close());

  it('serves https and accepts the procurement agent SVID without any identity header', async () => {
    expect(sys.url.startsWith('https://')).toBe(true);
    const r = await post(sys, certs.agent);
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('APPROVED');
  });

  it('accepts a sub-identity below the agent path', async () => {
    expect((await post(sys, certs.subAgent)).status).toBe(201);
  });

  it('accepts a header that agrees with the certificate', async () => {
    expect((await post(sys, certs.agent, { 'x-spiffe-id': AGENT_ID })).status).toBe(201);
  });

  it.each([
    ['a header naming another identity', () => certs.agent, `${AGENT_ID}/other`, 'disagrees'],
    ['a procurement-agent-evil SVID', () => certs.evil, undefined, 'not the procurement agent'],
    ['an SVID of another trust domain', () => certs.otherDomain, undefined, 'not the procurement agent'],
    ['a certificate with two URI SANs', () => certs.twoUris, undefined, '2 URI SANs'],
    ['a certificate without a URI SAN', () => certs.noUri, undefined, '0 URI SANs'],
  ])('refuses %s with 401', async (_name, identity, header, reason) => {
    const r = await post(sys, identity(), header ? { 'x-spiffe-id': header } : {});
    expect(r.status).toBe(401);
    expect(String(r.body.detail)).toMatch(/AI workload identity is not verified/);
    expect(String(r.body.detail)).toContain(reason);
  });

  it('refuses the TLS handshake for a certificate from another CA', async () => {
    await expect(post(sys, certs.fromOtherCa)).rejects.toThrow();
  });

  it('refuses the TLS handshake without a client certificate', async () => {
    await expect(post(sys, undefined, { 'x-spiffe-id': AGENT_ID })).rejects.toThrow();
  });

  it('does not let a header alone stand in for the certificate', async () => {
    // Even a trusted-proxy address does not matter once TLS is on: the certificate decides.
    const r = await post(sys, certs.evil, { 'x-spiffe-id': AGENT_ID });
    expect(r.status).toBe(401);
  });
});

describe('mutual TLS, client certificate optional (TLS_CLIENT_CERT=optional)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded({ ...tlsEnv(), TLS_CLIENT_CERT: 'optional' });
  });
  afterAll(() => sys.close());

  it('answers 401 (not a handshake failure) without a certificate, even with a header', async () => {
    const r = await post(sys, undefined, { 'x-spiffe-id': AGENT_ID });
    expect(r.status).toBe(401);
    expect(String(r.body.detail)).toContain('no client certificate');
  });

  it('answers 401 for a certificate from another CA', async () => {
    const r = await post(sys, certs.fromOtherCa);
    expect(r.status).toBe(401);
  });

  it('accepts the agent SVID', async () => {
    expect((await post(sys, certs.agent)).status).toBe(201);
  });
});
