/**
 * UCP's REST endpoints are served with TLS 1.3 at least (checkout-rest.md, order-rest.md: MUST),
 * tried with real TLS clients (issue 50): by default the server refuses an older handshake; an
 * operator who lowers TLS_MIN_VERSION for other callers keeps UCP at 1.3, refused per request.
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type Certificates, makeCertificates, type Pem } from '../procurement/support/certs.ts';

let certs: Certificates;
const agents: Agent[] = [];

function client(version: 'TLSv1.2' | 'TLSv1.3', identity?: Pem): Agent {
  const a = new Agent({
    connect: {
      ca: certs.ca.cert,
      minVersion: version,
      maxVersion: version,
      ...(identity ? { cert: identity.cert, key: identity.key } : {}),
    },
  });
  agents.push(a);
  return a;
}

/** A UCP create without UCP-Agent: past the TLS check it is UCP's 400 invalid_profile_url. */
async function ucpCreate(sys: TestSystem, version: 'TLSv1.2' | 'TLSv1.3') {
  const res = await request(`${sys.url}/ucp/checkout-sessions`, {
    method: 'POST',
    dispatcher: client(version),
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: res.statusCode, body: (await res.body.json()) as { code?: string } };
}

const tlsEnv = (extra: Record<string, string> = {}) => ({
  TLS_CERT_FILE: certs.server.certFile,
  TLS_KEY_FILE: certs.server.keyFile,
  TLS_CA_FILE: certs.ca.certFile,
  // Platforms present no client certificate; the agent routes then answer 401.
  TLS_CLIENT_CERT: 'optional',
  ...extra,
});

beforeAll(() => {
  certs = makeCertificates();
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
});

describe('served TLS, the default minimum (TLS 1.3)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded(tlsEnv());
  });
  afterAll(() => sys.close());

  it('refuses a TLS 1.2 handshake', async () => {
    await expect(ucpCreate(sys, 'TLSv1.2')).rejects.toThrow(/version|protocol|alert/i);
  });

  it('serves UCP over TLS 1.3', async () => {
    const r = await ucpCreate(sys, 'TLSv1.3');
    expect(r).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_profile_url' }) });
  });
});

describe('TLS_MIN_VERSION=TLSv1.2 for older agents', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded(tlsEnv({ TLS_MIN_VERSION: 'TLSv1.2' }));
  });
  afterAll(() => sys.close());

  it('refuses UCP on a TLS 1.2 connection with 403 tls_version_unsupported, before any other step', async () => {
    const r = await ucpCreate(sys, 'TLSv1.2');
    expect(r).toEqual({ status: 403, body: expect.objectContaining({ code: 'tls_version_unsupported' }) });
  });

  it('serves UCP over TLS 1.3 and the agent routes over TLS 1.2', async () => {
    expect((await ucpCreate(sys, 'TLSv1.3')).status).toBe(400);
    const order = await request(`${sys.url}/api/v2/procurement/orders`, {
      method: 'POST',
      dispatcher: client('TLSv1.2', certs.agent),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        agent_id: 'agent-tls12-01',
        sku: 'SKU-TLS-000001',
        quantity: 1,
        max_budget_usd: 12.5,
      }),
    });
    expect(order.statusCode).toBe(201);
    await order.body.dump();
  });
});
