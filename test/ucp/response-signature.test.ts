/**
 * Signed responses on the UCP REST binding (signatures.md at v2026-04-08, "REST Response
 * Signing"), on the embedded system, checked as a platform would: the business's keys from
 * /.well-known/ucp, the Content-Digest (RFC 9530) hashed here over the bytes received, the RFC 9421
 * signature verified by http-message-signatures' verifyMessage with a key from those JWKs.
 * Answers of every kind: created, read, completed, order read, catalog, idempotent replay, and
 * the 4xx of each refusing step (identity, contract, size, media type, unknown path, method).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from './checkout.suite.ts';
import { verifyUcpResponse } from './support/response.ts';

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let key: string;
let jwks: Record<string, unknown>[];

beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
  });
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({ capabilities: ['checkout', 'order', 'discount', 'fulfillment', 'catalog.search'] }),
  );
  ({ key } = await issueKey(sys, {
    spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-responses-${process.pid}`,
    ucpProfile: profiles.origin,
  }));
  jwks = (
    (await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as { signing_keys: Record<string, unknown>[] }
  ).signing_keys;
}, 120_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

interface Raw {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
  json: Record<string, unknown>;
}

let seq = 0;
async function raw(
  method: string,
  path: string,
  o: { body?: string; headers?: Record<string, string>; auth?: boolean; idempotencyKey?: string } = {},
): Promise<Raw> {
  const res = await fetch(`${sys.url}${path}`, {
    method,
    headers: {
      'ucp-agent': `profile="${profileUrl}"`,
      ...(o.auth === false ? {} : { authorization: `Bearer ${key}` }),
      ...(method !== 'GET' ? { 'idempotency-key': o.idempotencyKey ?? `resp-${process.pid}-${++seq}` } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { body: o.body } : {}),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {}
  return { status: res.status, headers: Object.fromEntries(res.headers), bytes, json };
}

/** The platform's check (support/response.ts), the digest asserted on its own. */
async function verifyResponse(r: Raw, status = r.status): Promise<{ ok: boolean; components: string[] }> {
  const v = await verifyUcpResponse(r, jwks, status);
  expect(v.digestOk).toBe(true);
  return v;
}

const createBody = JSON.stringify({
  line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
  fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
});

describe('UCP REST response signatures (RFC 9421 @status, RFC 9530 Content-Digest)', () => {
  it('signs the checkout lifecycle, the order read and an idempotent replay; a changed status does not verify', async () => {
    const answers: Raw[] = [];
    const created = await raw('POST', '/ucp/checkout-sessions', {
      body: createBody,
      idempotencyKey: `replay-${process.pid}`,
    });
    answers.push(created);
    const id = expectCheckout({ status: created.status, headers: new Headers(), body: created.json }, 201).id;
    // The same Idempotency-Key and body: the first answer again, signed again.
    answers.push(
      await raw('POST', '/ucp/checkout-sessions', {
        body: createBody,
        idempotencyKey: `replay-${process.pid}`,
      }),
    );
    expect(answers[1]?.bytes.equals(created.bytes)).toBe(true);
    answers.push(
      await raw('PUT', `/ucp/checkout-sessions/${id}`, {
        body: JSON.stringify({
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
      }),
    );
    answers.push(await raw('GET', `/ucp/checkout-sessions/${id}`));
    const done = await raw('POST', `/ucp/checkout-sessions/${id}/complete`, {
      body: JSON.stringify({
        payment: purchaseOrderPayment('PO-SIG-1'),
      }),
    });
    expect(done.json.status).toBe('completed');
    answers.push(done);
    const orderId = (done.json.order as { id: string }).id;
    answers.push(await raw('GET', `/ucp/orders/${orderId}`));
    answers.push(await raw('POST', '/ucp/catalog/search', { body: JSON.stringify({ query: 'widget' }) }));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 200, 200, 200, 200, 200]);
    for (const a of answers) {
      const v = await verifyResponse(a);
      expect(v.ok, `${a.status} ${a.bytes.toString().slice(0, 80)}`).toBe(true);
      expect(v.components).toEqual(['@status', 'content-digest', 'content-type']);
      // What a platform was told cannot be retold: the same signature under another status fails.
      expect((await verifyResponse(a, a.status === 200 ? 201 : 200)).ok).toBe(false);
    }
  });

  it.each([
    [
      'no credentials (401)',
      401,
      () => raw('POST', '/ucp/checkout-sessions', { body: createBody, auth: false }),
    ],
    [
      'a body that is not JSON (400)',
      400,
      () => raw('POST', '/ucp/checkout-sessions', { body: '{"line_items":' }),
    ],
    ['a contract violation (400)', 400, () => raw('POST', '/ucp/checkout-sessions', { body: '{}' })],
    [
      'a body over the limit (413)',
      413,
      () => raw('POST', '/ucp/checkout-sessions', { body: `{"x":"${'a'.repeat(200_000)}"}` }),
    ],
    [
      'another media type (415)',
      415,
      () =>
        raw('POST', '/ucp/checkout-sessions', {
          body: createBody,
          headers: { 'content-type': 'text/plain' },
        }),
    ],
    [
      'an unknown session (404)',
      404,
      () => raw('GET', '/ucp/checkout-sessions/chk_00000000000000000000000000000000'),
    ],
    ['a path no route takes (404)', 404, () => raw('GET', '/ucp/nothing-here')],
    ['a method a path does not take (405)', 405, () => raw('DELETE', '/ucp/checkout-sessions')],
    // The router's own refusals, before any route or hook of the endpoint (lib/http/app.ts).
    ['a path it cannot decode (400)', 400, () => raw('GET', '/ucp/checkout-sessions/%E0%A4%A')],
    [
      'a path parameter over 100 characters (414)',
      414,
      () => raw('GET', `/ucp/checkout-sessions/${'a'.repeat(150)}`),
    ],
    [
      'a body over the limit on a path no route takes (413)',
      413,
      () => raw('POST', '/ucp/nothing-here', { body: `{"x":"${'a'.repeat(2_000_000)}"}` }),
    ],
    // A path no route takes is refused before its body is read, whatever the body.
    [
      'another media type on a path no route takes (404)',
      404,
      () => raw('POST', '/ucp/nothing-here', { body: 'x', headers: { 'content-type': 'text/plain' } }),
    ],
    ['the endpoint itself (404)', 404, () => raw('GET', '/ucp')],
  ] as const)('signs the refusal of %s', async (_what, status, call) => {
    const r = await call();
    expect(r.status).toBe(status);
    expect(typeof r.json.code).toBe('string');
    const v = await verifyResponse(r);
    expect(v.ok).toBe(true);
    expect(v.components).toEqual(['@status', 'content-digest', 'content-type']);
  });
});
