/**
 * With mutual TLS terminated by the server, an agent's identity is its client certificate and
 * it need not send X-Spiffe-Id: it is still refused GraphQL and the full documents. Certificates
 * are made by the procurement tests' helper (openssl, in a temp folder).
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT_ID, type Certificates, makeCertificates, type Pem } from '../procurement/support/certs.ts';

let certs: Certificates;
let sys: TestSystem;
const agents: Agent[] = [];

beforeAll(async () => {
  certs = makeCertificates();
  sys = await startEmbedded({
    TLS_CERT_FILE: certs.server.certFile,
    TLS_KEY_FILE: certs.server.keyFile,
    TLS_CA_FILE: certs.ca.certFile,
    TLS_CLIENT_CERT: 'optional',
  });
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await sys?.close();
});

function as(identity?: Pem): Agent {
  const a = new Agent({
    connect: { ca: certs.ca.cert, ...(identity ? { cert: identity.cert, key: identity.key } : {}) },
  });
  agents.push(a);
  return a;
}

const introspect = (identity?: Pem) =>
  request(`${sys.url}/graphql`, {
    method: 'POST',
    dispatcher: as(identity),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
  });

describe('agents identified by their client certificate (mutual TLS, no X-Spiffe-Id)', () => {
  it('refuses GraphQL introspection to the procurement agent SVID', async () => {
    expect(AGENT_ID).toContain('procurement-agent');
    const res = await introspect(certs.agent);
    expect(res.statusCode).toBe(403);
    expect(await res.body.text()).toContain('agent-graphql-refused');
  });

  it('refuses it to any other SVID too (fail closed)', async () => {
    const res = await introspect(certs.evil);
    expect(res.statusCode).toBe(403);
    await res.body.dump();
  });

  it('refuses the full documents and serves the bounded contract', async () => {
    const token = await sys.token(['contracts:read']);
    const full = await request(`${sys.url}/openapi/procurement.yaml`, {
      dispatcher: as(certs.agent),
      headers: { authorization: `Bearer ${token}` },
    });
    expect(full.statusCode).toBe(403);
    await full.body.dump();
    const bounded = await request(`${sys.url}/openapi/agent.yaml`, { dispatcher: as(certs.agent) });
    expect(bounded.statusCode).toBe(200);
    expect(await bounded.body.text()).toContain('openapi: 3.1');
  });

  it('still lets a client without a certificate introspect (it is not an agent)', async () => {
    const res = await introspect();
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('__schema');
  });
});
