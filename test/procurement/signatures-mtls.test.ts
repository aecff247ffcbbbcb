/**
 * A signature and a client certificate on one request (TLS_CLIENT_CERT=optional, so agents
 * outside the mesh can connect without one): the signature alone is enough; when both are
 * there they must name the same SPIFFE ID; a bad signature is never ignored because the
 * certificate is good.
 */

import type { KeyObject } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAgentRequest } from '../../gateway/agent/identity/signature/sign.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ORDERS, validOrder } from './support/agent.ts';
import { AGENT_ID, type Certificates, makeCertificates, type Pem } from './support/certs.ts';
import { ed25519, writeKeysFile } from './support/signed.ts';

const agentKey = ed25519();
const subAgentKey = ed25519();
const unknownKey = ed25519();
let certs: Certificates;
let sys: TestSystem;
const agents: Agent[] = [];

beforeAll(async () => {
  certs = makeCertificates();
  const keys = await writeKeysFile(mkdtempSync(join(tmpdir(), 'ac-sigs-')), {
    [AGENT_ID]: [agentKey],
    [`${AGENT_ID}/eu-west-1`]: [subAgentKey],
  });
  sys = await startEmbedded({
    TLS_CERT_FILE: certs.server.certFile,
    TLS_KEY_FILE: certs.server.keyFile,
    TLS_CA_FILE: certs.ca.certFile,
    TLS_CLIENT_CERT: 'optional',
    AGENT_SIGNATURE_KEYS: keys,
  });
}, 60_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await sys?.close();
});

async function send(identity: Pem | undefined, key: KeyObject | undefined, traceId: string) {
  const body = JSON.stringify(validOrder());
  const url = `${sys.url}${ORDERS}`;
  const base = { 'content-type': 'application/json', 'x-trace-id': traceId };
  const headers = key
    ? await signAgentRequest({ url, method: 'POST', headers: base, body, privateKey: key })
    : base;
  const dispatcher = new Agent({
    connect: { ca: certs.ca.cert, ...(identity ? { cert: identity.cert, key: identity.key } : {}) },
  });
  agents.push(dispatcher);
  const res = await request(url, { method: 'POST', dispatcher, headers, body });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const sourceOf = async (traceId: string) => {
  for (let i = 0; i < 200; i++) {
    const rows = await sys.platform.db.query<{ identity_source: string | null }>(
      'SELECT identity_source FROM agent_audit_log WHERE trace_id = $1',
      [traceId],
    );
    if (rows[0]) return rows[0].identity_source;
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
};

describe('a signature over mutual TLS', () => {
  it('is enough without a client certificate (an agent outside the mesh): source "signature"', async () => {
    const r = await send(undefined, agentKey, 'tls-sig-only');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(await sourceOf('tls-sig-only')).toBe('signature');
  });

  it('is accepted with a certificate of the same identity: source "mtls+signature"', async () => {
    const r = await send(certs.agent, agentKey, 'tls-both');
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(await sourceOf('tls-both')).toBe('mtls+signature');
  });

  it('keeps the source "mtls" for a certificate alone', async () => {
    expect((await send(certs.agent, undefined, 'tls-cert-only')).status).toBe(201);
    expect(await sourceOf('tls-cert-only')).toBe('mtls');
  });

  it('is refused when the certificate and the key name different identities', async () => {
    const r = await send(certs.agent, subAgentKey, 'tls-disagree');
    expect(r.status).toBe(401);
    expect(r.body.signature_error).toBe('identity-mismatch');
  });

  it('is refused when invalid, even though the certificate is good', async () => {
    const r = await send(certs.agent, unknownKey, 'tls-bad-sig');
    expect(r.status).toBe(401);
    expect(r.body.signature_error).toBe('unknown-key');
  });

  it('is refused with a certificate of the bundle that is not the procurement agent', async () => {
    const r = await send(certs.evil, agentKey, 'tls-evil');
    expect(r.status).toBe(401);
    expect(String(r.body.detail)).toContain('not the procurement agent');
  });
});
