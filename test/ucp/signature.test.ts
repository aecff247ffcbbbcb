/**
 * A UCP platform that signs its requests (signatures.md at v2026-04-08, "REST Request Signing"),
 * on the embedded system. The platform's P-256 key is made here with node:crypto, its public JWK
 * served in the platform profile; requests are signed by support/sign.ts (http-message-signatures)
 * and the Content-Digest (RFC 9530) is hashed here: nothing of the system's own signing code.
 * Covered, as the tag's table asks: `@method`, `@authority`, `@path`, `@query` if any,
 * `ucp-agent`, `idempotency-key` on writes, `content-digest` + `content-type` with a body.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  type UcpReply,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from './checkout.suite.ts';
import { publicJwk, type SignOpts, signedIdentity, ucpSigner } from './support/sign.ts';

const KID = 'platform-2026';
let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let platformKey: KeyObject;
let otherKey: KeyObject;
let p384Key: KeyObject;
let p384ProfileUrl: string;

beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
  });
  profiles = await startProfileServer();
  platformKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  profileUrl = profiles.set(
    '/signed/profile.json',
    platformProfile({ signingKeys: [publicJwk(platformKey, KID, 'ES256')] }),
  );
  // Another platform (host) signing with ES384, which the verifier accepts beside ES256.
  p384Key = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
  const other = await startProfileServer();
  extraServers.push(other);
  p384ProfileUrl = other.set(
    '/p384/profile.json',
    platformProfile({ signingKeys: [publicJwk(p384Key, 'platform-384', 'ES384')] }),
  );
});
const extraServers: ProfileServer[] = [];
afterAll(async () => {
  for (const s of extraServers) await s.close();
  await profiles?.close();
  await sys?.close();
});

const signed = ucpSigner({
  base: () => sys.url,
  profileUrl: () => profileUrl,
  key: () => platformKey,
  kid: KID,
});

const create = (o?: SignOpts) =>
  signed('POST', '/checkout-sessions', { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] }, o);

/** The identity docs/ucp.md ("Identity") gives a platform signing with the profile at profileUrl. */
const documentedIdentity = () => signedIdentity(profileUrl);

describe('UCP request signatures (RFC 9421, signatures.md v2026-04-08)', () => {
  it('a signed create, update and complete succeed; the session belongs to the documented identity', async () => {
    const c = expectCheckout(
      await signed('POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
      }),
      201,
    );
    const u = expectCheckout(
      await signed('PUT', `/checkout-sessions/${c.id}`, {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        fulfillment: {
          methods: [
            {
              line_item_ids: ['li_0'],
              groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
            },
          ],
        },
      }),
    );
    expect(u.status).toBe('ready_for_complete');
    expect(expectCheckout(await signed('GET', `/checkout-sessions/${c.id}`)).id).toBe(c.id);
    const done = expectCheckout(
      await signed('POST', `/checkout-sessions/${c.id}/complete`, {
        payment: purchaseOrderPayment('PO-SIG-1'),
      }),
    );
    expect(done.status).toBe('completed');

    // Ownership: a key issued to the documented SPIFFE ID reads the session; another identity gets 404.
    const owner = await issueKey(sys, {
      spiffeId: documentedIdentity(),
      agentId: `agent-ucp-sig-${process.pid}`,
      ucpProfile: profileUrl,
    });
    const stranger = await issueKey(sys, {
      spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-sig-stranger-${process.pid}`,
      ucpProfile: profileUrl,
    });
    const asOwner = await ucpCall(
      sys.url,
      { key: owner.key, profileUrl },
      'GET',
      `/checkout-sessions/${c.id}`,
    );
    expect(expectCheckout(asOwner).status).toBe('completed');
    const asStranger = await ucpCall(
      sys.url,
      { key: stranger.key, profileUrl },
      'GET',
      `/checkout-sessions/${c.id}`,
    );
    expect(asStranger.status).toBe(404);
  });

  it('a POST …/cancel without a body (and without Content-Digest) verifies', async () => {
    const c = expectCheckout(await create(), 201);
    const r = await signed('POST', `/checkout-sessions/${c.id}/cancel`);
    expect(expectCheckout(r).status).toBe('canceled');
  });

  it('a cancel with a body is held to its Content-Digest: signed it verifies, tampered it is 400', async () => {
    const a = expectCheckout(await create(), 201);
    expect(expectCheckout(await signed('POST', `/checkout-sessions/${a.id}/cancel`, {})).status).toBe(
      'canceled',
    );
    const b = expectCheckout(await create(), 201);
    const r = await signed('POST', `/checkout-sessions/${b.id}/cancel`, {}, { sendBody: '[]' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'digest_mismatch' });
    expect(expectCheckout(await signed('GET', `/checkout-sessions/${b.id}`)).status).not.toBe('canceled');
  });

  it('ES384 with a P-384 key of another platform verifies; that platform is another identity', async () => {
    const c = expectCheckout(
      await create({ profile: p384ProfileUrl, key: p384Key, kid: 'platform-384', hash: 'sha384' }),
      201,
    );
    expect((await signed('GET', `/checkout-sessions/${c.id}`)).status).toBe(404);
  });

  const refusals: [string, () => Promise<UcpReply>, number, string][] = [
    [
      'an alg parameter (the key decides)',
      () => create({ params: ['keyid', 'created', 'alg'] }),
      400,
      'algorithm_unsupported',
    ],
    [
      // The signatures table: a required signature header that is absent is signature_missing.
      'no Signature beside Signature-Input',
      () => create({ after: { signature: null } }),
      401,
      'signature_missing',
    ],
    [
      'no Signature-Input beside Signature',
      () => create({ after: { 'signature-input': null } }),
      401,
      'signature_missing',
    ],
    [
      'a Signature that is not a dictionary',
      () => create({ after: { signature: 'not a dictionary' } }),
      401,
      'signature_invalid',
    ],
    [
      'a changed Idempotency-Key',
      () => create({ after: { 'idempotency-key': `changed-${Date.now()}` } }),
      401,
      'signature_invalid',
    ],
    [
      'another UCP-Agent than the one signed',
      () => create({ after: { 'ucp-agent': `profile="${p384ProfileUrl}"` } }),
      401,
      'key_not_found',
    ],
    [
      'a P-256 signature checked with sha384 (wrong hash)',
      () => create({ hash: 'sha384' }),
      401,
      'signature_invalid',
    ],
    [
      'a tampered body (Content-Digest of another body)',
      () =>
        create({ sendBody: JSON.stringify({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: 9 }] }) }),
      400,
      'digest_mismatch',
    ],
    ['a signature by a key not in the profile', () => create({ key: otherKey }), 401, 'signature_invalid'],
    ['a keyid the profile does not list', () => create({ kid: 'platform-1999' }), 401, 'key_not_found'],
    [
      'created an hour ago',
      () => create({ created: Math.floor(Date.now() / 1000) - 3600 }),
      401,
      'signature_invalid',
    ],
    [
      'created an hour ahead',
      () => create({ created: Math.floor(Date.now() / 1000) + 3600 }),
      401,
      'signature_invalid',
    ],
    ...[
      '@method',
      '@authority',
      '@path',
      'ucp-agent',
      'idempotency-key',
      'content-digest',
      'content-type',
    ].map((c): [string, () => Promise<UcpReply>, number, string] => [
      `${c} not covered`,
      () => create({ drop: [c] }),
      401,
      'signature_invalid',
    ]),
  ];
  it.each(refusals)('refuses %s (documented 4xx, machine-readable)', async (_name, send, status, code) => {
    const r = await send();
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ code });
    expect(typeof r.body.content).toBe('string');
  });

  it('within the window (created 30 s ago, 30 s ahead) a signature verifies', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectCheckout(await create({ created: now - 30 }), 201);
    expectCheckout(await create({ created: now + 30 }), 201);
  });
});
