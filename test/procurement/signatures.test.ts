/**
 * RFC 9421 HTTP message signatures (Web Bot Auth profile) as the agent's identity, end to end:
 * a real signer (http-message-signatures' signing side, generated Ed25519 and P-256 keys) over
 * real HTTP against the embedded system, started as for an agent outside the mesh (loopback is
 * not a trusted proxy, so X-Spiffe-Id alone proves nothing).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAgentRequest } from '../../gateway/agent/identity/signature/sign.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { contentDigest } from '../../lib/http-signature/digest.ts';
import type { ProcurementModule } from '../../subgraphs/procurement/index.ts';
import { AGENT, EDGE_ORDERS, ORDERS, post, type Reply, validOrder } from './support/agent.ts';
import { ed25519, p256, type SignedPost, signedPost, writeKeysFile } from './support/signed.ts';

const ED_ID = `${AGENT}/signed-ed`;
const EC_ID = `${AGENT}/signed-ec`;
const BLOCK_ID = `${AGENT}/signed-block`;
const COUNT_ID = `${AGENT}/signed-count`;
const NOT_AGENT = 'spiffe://example.org/ns/billing/sa/invoicer';

const edKey = ed25519();
const ecKey = p256();
const blockKey = ed25519();
const countKey = ed25519();
const notAgentKey = ed25519();
const unknownKey = ed25519();

let sys: TestSystem;
const placed = () => (sys.local.procurement as ProcurementModule).api.placed();
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ac-sigs-'));
  const keys = await writeKeysFile(dir, {
    [ED_ID]: [edKey],
    [EC_ID]: [ecKey],
    [BLOCK_ID]: [blockKey],
    [COUNT_ID]: [countKey],
    [NOT_AGENT]: [notAgentKey],
  });
  // Loopback is not a trusted proxy here: the test client is an agent outside the mesh.
  sys = await startEmbedded({ AGENT_SIGNATURE_KEYS: keys, TRUSTED_PROXIES: '192.0.2.1' });
}, 60_000);
afterAll(() => sys?.close());

const auditFor = async (traceId: string) => {
  for (let i = 0; i < 200; i++) {
    const rows = await sys.platform.db.query<{
      status: number;
      identity: string | null;
      identity_source: string | null;
      reason: string;
    }>('SELECT status, identity, identity_source, reason FROM agent_audit_log WHERE trace_id = $1', [
      traceId,
    ]);
    if (rows.length > 0) return rows;
    await new Promise((r) => setTimeout(r, 10));
  }
  return [];
};

function expectRefused(r: Reply, code: string) {
  expect(r.status, r.text).toBe(401);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(String(r.json.type)).toMatch(/\/unverified-workload-identity$/);
  expect(r.json.signature_error, r.text).toBe(code);
  expect(String(r.json.detail)).toMatch(/HTTP message signature: /);
}

describe('a signed order', () => {
  it('is placed when signed with a registered Ed25519 key: 201, audited with the source "signature"', async () => {
    const r = await signedPost(sys.url, edKey, { headers: { 'x-trace-id': 'sig-ok-ed' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.status).toBe('APPROVED');
    const [entry] = await auditFor('sig-ok-ed');
    expect(entry).toMatchObject({ status: 201, identity: ED_ID, identity_source: 'signature', reason: 'ok' });
  });

  it('is placed when signed with a registered ES256 (P-256) key, on the edge path too', async () => {
    const r = await signedPost(sys.url, ecKey);
    expect(r.status, r.text).toBe(201);
    const edge = await signedPost(sys.url, ecKey, { path: EDGE_ORDERS });
    expect(edge.status, edge.text).toBe(201);
  });

  it('is not placed with X-Spiffe-Id alone from a peer that is not a trusted proxy', async () => {
    const r = await post(sys.url, { spiffe: ED_ID });
    expect(r.status).toBe(401);
    expect(r.json.signature_error).toBeUndefined();
  });

  it('accepts an X-Spiffe-Id that names the signing key own identity (all sources must agree)', async () => {
    const r = await signedPost(sys.url, edKey, { send: { headers: { 'x-spiffe-id': ED_ID } } });
    expect(r.status, r.text).toBe(201);
  });

  it('accepts and binds a covered Signature-Agent (string and dictionary forms)', async () => {
    const s = await signedPost(sys.url, edKey, { signatureAgent: '"https://agents.example.org"' });
    expect(s.status, s.text).toBe(201);
    const d = await signedPost(sys.url, edKey, { signatureAgent: 'sig="https://agents.example.org"' });
    expect(d.status, d.text).toBe(201);
    const swapped = await signedPost(sys.url, edKey, {
      signatureAgent: '"https://agents.example.org"',
      send: { headers: { 'signature-agent': '"https://evil.example"' } },
    });
    expectRefused(swapped, 'invalid-signature');
  });

  it('reads back its order with a signed GET (no body, so no Content-Digest)', async () => {
    const r = await signedPost(sys.url, edKey);
    expect(r.status, r.text).toBe(201);
    const location = r.headers.location as string;
    const headers = await signAgentRequest({
      url: `${sys.url}${location}`,
      method: 'GET',
      privateKey: edKey,
    });
    const read = await request(`${sys.url}${location}`, { headers });
    expect(read.statusCode).toBe(200);
    expect(((await read.body.json()) as { order_id: string }).order_id).toBe(r.json.order_id);
  });

  it('is refused when sent again with the same nonce: 201 once, then 401 replayed-nonce', async () => {
    const body = JSON.stringify(validOrder());
    const headers = await signAgentRequest({
      url: `${sys.url}${ORDERS}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      privateKey: edKey,
    });
    const first = await post(sys.url, { spiffe: null, body, headers });
    expect(first.status, first.text).toBe(201);
    const before = placed();
    const again = await post(sys.url, { spiffe: null, body, headers });
    expectRefused(again, 'replayed-nonce');
    expect(placed()).toBe(before);
  });
});

describe('refusals, one per reason (401 naming it; nothing reaches the order domain)', () => {
  const otherBody = JSON.stringify(validOrder({ quantity: 6 }));
  const cases: [string, () => Parameters<typeof signedPost>, string][] = [
    ['a key nobody registered', () => [sys.url, unknownKey, {}], 'unknown-key'],
    [
      'a key registered for an identity that is not the procurement agent',
      () => [sys.url, notAgentKey, {}],
      'identity-mismatch',
    ],
    [
      'an X-Spiffe-Id naming another agent than the key',
      () => [sys.url, edKey, { send: { headers: { 'x-spiffe-id': EC_ID } } }],
      'identity-mismatch',
    ],
    [
      'an expired signature',
      () => [sys.url, edKey, { created: now() - 400, validitySeconds: 60 }],
      'expired',
    ],
    [
      'created in the future beyond the skew',
      () => [sys.url, edKey, { created: now() + 120 }],
      'not-yet-valid',
    ],
    [
      'a validity longer than the maximum',
      () => [sys.url, edKey, { validitySeconds: 3600 }],
      'validity-too-long',
    ],
    [
      'no @authority covered',
      () => [sys.url, edKey, { components: ['@method', '@path', 'content-digest', 'content-type'] }],
      'missing-component',
    ],
    [
      'no Content-Digest covered',
      () => [sys.url, edKey, { components: ['@method', '@authority', '@path', 'content-type'] }],
      'missing-component',
    ],
    [
      'no @query covered while the target has a query',
      () => [
        sys.url,
        edKey,
        {
          path: `${ORDERS}?note=1`,
          components: ['@method', '@authority', '@path', 'content-digest', 'content-type'],
        },
      ],
      'missing-component',
    ],
    [
      'a Signature-Agent added after signing (not covered)',
      () => [sys.url, edKey, { send: { headers: { 'signature-agent': '"https://agents.example.org"' } } }],
      'missing-component',
    ],
    [
      'a tampered body (Content-Digest left as signed)',
      () => [sys.url, edKey, { send: { body: otherBody } }],
      'content-digest-mismatch',
    ],
    [
      'a body removed after signing',
      () => [sys.url, edKey, { send: { body: '' } }],
      'content-digest-mismatch',
    ],
    [
      'a tampered body with its Content-Digest recomputed',
      () => [
        sys.url,
        edKey,
        { send: { body: otherBody, headers: { 'content-digest': contentDigest(otherBody) } } },
      ],
      'invalid-signature',
    ],
    [
      'a tampered path',
      () => [sys.url, edKey, { path: EDGE_ORDERS, send: { path: ORDERS } }],
      'invalid-signature',
    ],
    ['a tampered method', () => [sys.url, edKey, { method: 'PUT' }], 'invalid-signature'],
    [
      'a tampered authority',
      () => [sys.url, edKey, { send: { headers: { host: 'shop.example.org' } } }],
      'invalid-signature',
    ],
    ['alg hmac-sha256', () => [sys.url, edKey, { params: { alg: 'hmac-sha256' } }], 'unsupported-algorithm'],
    [
      'alg rsa-pss-sha512',
      () => [sys.url, edKey, { params: { alg: 'rsa-pss-sha512' } }],
      'unsupported-algorithm',
    ],
    [
      'an ES256 alg on an Ed25519 key',
      () => [sys.url, edKey, { params: { alg: 'ecdsa-p256-sha256' } }],
      'unsupported-algorithm',
    ],
    [
      'another tag than web-bot-auth',
      () => [sys.url, edKey, { params: { tag: 'other-profile' } }],
      'not-web-bot-auth',
    ],
    [
      'a Signature that is not a byte sequence',
      () => [sys.url, edKey, { send: { headers: { signature: 'sig=?1' } } }],
      'malformed',
    ],
    [
      'a Content-Digest without sha-256 or sha-512',
      () => [sys.url, edKey, { headers: { 'content-digest': 'md5=:AAAAAAAAAAAAAAAAAAAAAA==:' } }],
      'content-digest',
    ],
  ];

  it.each(cases.map(([label, args, code]) => [label, code, args] as const))(
    '%s → %s',
    async (_label, code, args) => {
      const before = placed();
      const [url, key, opts] = args();
      expectRefused(await signedPost(url, key, opts as SignedPost), code);
      expect(placed()).toBe(before);
    },
  );

  it('refuses a Signature-Input without a Signature, and the reverse', async () => {
    const input = await post(sys.url, {
      spiffe: ED_ID,
      headers: { 'signature-input': 'sig=("@method");tag="web-bot-auth"' },
    });
    expectRefused(input, 'malformed');
    const sig = await post(sys.url, { spiffe: ED_ID, headers: { signature: 'sig=:AAAA:' } });
    expectRefused(sig, 'malformed');
  });

  it('audits a refused signature with no identity and the reason', async () => {
    const r = await signedPost(sys.url, unknownKey, { headers: { 'x-trace-id': 'sig-unknown' } });
    expectRefused(r, 'unknown-key');
    const [entry] = await auditFor('sig-unknown');
    expect(entry).toMatchObject({ status: 401, identity: null, identity_source: null });
    expect(entry?.reason).toMatch(/^identity: HTTP message signature: no key with keyid/);
  });
});

describe('a body that does not match its signed Content-Digest', () => {
  it('does not count towards the block: seven in a row, then a valid order is still placed', async () => {
    for (let i = 0; i < 7; i++) {
      const r = await signedPost(sys.url, blockKey, {
        send: { body: JSON.stringify(validOrder({ quantity: 7 })) },
      });
      expectRefused(r, 'content-digest-mismatch');
    }
    const ok = await signedPost(sys.url, blockKey);
    expect(ok.status, ok.text).toBe(201);
  });

  it('unlike a signed body that breaks the contract: six of those block the identity', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await signedPost(sys.url, countKey, { body: JSON.stringify(validOrder({ quantity: 0 })) });
      expect(r.status, r.text).toBe(422);
    }
    const blocked = await signedPost(sys.url, countKey);
    expect(blocked.status, blocked.text).toBe(429);
  });
});

describe('fuzzing the signature fields', () => {
  const fieldChar = fc.constantFrom(
    ...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789=:;,()"*?-_./+@ \\'.split(''),
  );
  const field = fc.string({ unit: fieldChar, maxLength: 120 });

  it('answers every mangled Signature, Signature-Input, Signature-Agent and Content-Digest with a 401 problem, never a 5xx', async () => {
    const body = JSON.stringify(validOrder());
    const good = await signAgentRequest({
      url: `${sys.url}${ORDERS}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      privateKey: edKey,
      signatureAgent: '"https://agents.example.org"',
    });
    // Spent once, so a mutation that happens to rebuild the valid request is a replay (401) too.
    expect((await post(sys.url, { spiffe: null, body, headers: good })).status).toBe(201);
    const names = ['signature', 'signature-input', 'signature-agent', 'content-digest'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...names),
        fc.oneof(
          field,
          // Near misses: a valid value cut short, or with a fuzzed tail.
          fc.tuple(fc.constantFrom(...names), fc.nat(), field).map(([n, cut, tail]) => {
            const v = good[n] ?? '';
            return v.slice(0, cut % (v.length + 1)) + tail;
          }),
        ),
        async (name, value) => {
          const r = await post(sys.url, { spiffe: null, body, headers: { ...good, [name]: value.trim() } });
          expect(r.status, `${name}: ${value} → ${r.text}`).toBe(401);
          expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
        },
      ),
      { numRuns: 150 },
    );
  });
});
