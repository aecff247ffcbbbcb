/**
 * AP2 mandates on the UCP checkout (ap2-mandates.md at v2026-04-08), on the embedded system, the
 * test playing the platform: its own ES256 key in its profile's `signing_keys`, `ap2_mandate`
 * among its capabilities, mandates made with the @sd-jwt library (support/mandate.ts) and the
 * business's signature checked with jose and canonicalize from the keys of /.well-known/ucp:
 * nothing of the system's own AP2 code. Then every hostile mandate the issue lists, each refused
 * with the spec's code, the checkout left uncompleted, the refusal audited.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, importJWK, type JSONWebKeySet, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuthorizedOrder } from '../../gateway/agent/order/authorization-verify.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { issueKey } from '../acp/support/acp.ts';
import { expectCheckout, FIXTURE } from './checkout.suite.ts';
import { type MandateOpts, makeMandate, withAlgNone, withKbAlgNone } from './support/mandate.ts';
import { publicJwk } from './support/sign.ts';
import { type ProfileServer, platformProfile, startProfileServer, ucpCall } from './support/ucp.ts';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string;
const AP2 = 'dev.ucp.shopping.ap2_mandate';
/** The vendored extension schema's patterns (schemas/ucp/v2026-04-08/README.md, quirk 5). */
const PATTERNS = (
  JSON.parse(
    readFileSync(
      new URL('../../schemas/ucp/v2026-04-08/schemas/shopping/ap2_mandate.json', import.meta.url),
      'utf8',
    ),
  ) as { $defs: Record<string, { pattern: string }> }
).$defs;
const KID = 'platform-ap2-2026';

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let plainProfileUrl: string;
let platformKey: KeyObject;
let otherKey: KeyObject;
let holder: KeyObject;
let audience: string;
let businessKeys: JWK[];
let platforms = 0;

beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
  });
  profiles = await startProfileServer();
  platformKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  holder = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const profile = platformProfile({
    capabilities: ['checkout', 'order', 'discount', 'fulfillment', 'ap2_mandate'],
    signingKeys: [publicJwk(platformKey, KID, 'ES256')],
  });
  profileUrl = profiles.set('/ap2/profile.json', profile);
  plainProfileUrl = profiles.set('/plain/profile.json', platformProfile());
  const business = (await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as {
    signing_keys: JWK[];
    ucp: { services: Record<string, { transport: string; endpoint: string }[]> };
  };
  businessKeys = business.signing_keys;
  const rest = business.ucp.services['dev.ucp.shopping']?.find((s) => s.transport === 'rest');
  audience = `${new URL(rest?.endpoint ?? sys.url).origin}/.well-known/ucp`;
}, 120_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

type Checkout = Record<string, unknown> & { id: string; status: string };

async function platform(url = () => profileUrl) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ap2-${++platforms}-${process.pid}`;
  const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
  const call = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
    ucpCall(sys.url, { key, profileUrl: url() }, method, path, body);
  /** A checkout of item A, shipping selected: ready to complete. */
  const ready = async (): Promise<Checkout> => {
    const c = expectCheckout(
      await call('POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
      }),
      201,
    );
    const u = expectCheckout(
      await call('PUT', `/checkout-sessions/${c.id}`, {
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
    return u;
  };
  const complete = (id: string, ap2?: unknown) =>
    call('POST', `/checkout-sessions/${id}/complete`, {
      payment: {
        instruments: [
          {
            id: 'po_1',
            handler_id: 'purchase_order',
            type: 'purchase_order',
            selected: true,
            credential: { type: 'purchase_order', purchase_order_number: 'PO-AP2-1' },
          },
        ],
      },
      ...(ap2 === undefined ? {} : { ap2 }),
    });
  const mandate = (checkout: Record<string, unknown>, o?: MandateOpts) =>
    makeMandate(checkout, { key: platformKey, kid: KID, holder, audience }, o);
  return { spiffeId, call, ready, complete, mandate };
}

/** The business's signature as a platform checks it (verify_merchant_authorization), independently. */
async function verifyBusiness(checkout: Record<string, unknown>): Promise<boolean> {
  const jws = (checkout.ap2 as { merchant_authorization?: string } | undefined)?.merchant_authorization ?? '';
  const [header = '', empty, signature = ''] = jws.split('.');
  if (empty !== '') return false;
  const h = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; kid: string };
  const jwk = businessKeys.find((k) => k.kid === h.kid);
  if (!jwk || h.alg !== 'ES256') return false;
  const { ap2: _ap2, ...payload } = checkout;
  const body = Buffer.from(canonicalize(payload)).toString('base64url');
  try {
    await compactVerify(`${header}.${body}.${signature}`, await importJWK(jwk, 'ES256'));
    return true;
  } catch {
    return false;
  }
}

type Row = { status: number; reason: string | null };
async function auditOf(identity: string, path: string, n: number): Promise<Row[]> {
  let rows: Row[] = [];
  for (let i = 0; i < 200 && rows.length < n; i++) {
    rows = await sys.platform.db.query<Row>(
      'SELECT status, reason FROM agent_audit_log WHERE identity = $1 AND path LIKE $2 ORDER BY seq',
      [identity, `%${path}`],
    );
    if (rows.length < n) await new Promise((r) => setTimeout(r, 10));
  }
  return rows;
}

describe('AP2 mandates on the UCP checkout (ap2-mandates.md v2026-04-08)', () => {
  it('advertises the extension with dc+sd-jwt, extending checkout, beside ES256 signing_keys with kids', async () => {
    const profile = (await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as {
      ucp: { capabilities: Record<string, { extends?: string; config?: unknown }[]> };
    };
    expect(profile.ucp.capabilities[AP2]?.[0]).toMatchObject({
      extends: 'dev.ucp.shopping.checkout',
      config: { vp_formats_supported: { 'dc+sd-jwt': {} } },
    });
    expect(businessKeys.length).toBeGreaterThan(0);
    for (const k of businessKeys)
      expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: expect.any(String) });
  });

  it('signs every checkout of a negotiated session, and completes with a mandate of the signed checkout', async () => {
    const p = await platform();
    const c = await p.ready();
    expect((c.ucp as { capabilities: Record<string, unknown> }).capabilities[AP2]).toBeDefined();
    expect(c.ap2).toEqual({
      merchant_authorization: expect.stringMatching(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/),
    });
    expect(await verifyBusiness(c)).toBe(true);
    const read = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    expect(await verifyBusiness(read)).toBe(true);
    // One member changed and the signature no longer holds: it covers the whole checkout.
    expect(await verifyBusiness({ ...read, expires_at: '2099-01-01T00:00:00.000Z' })).toBe(false);
    expect(
      new RegExp(PATTERNS.merchant_authorization?.pattern ?? '^$').test(
        String((read.ap2 as { merchant_authorization: string }).merchant_authorization),
      ),
    ).toBe(true);
    const m = await p.mandate(read);
    // The tag's checkout_mandate pattern refuses this real SD-JWT+kb (its KB-JWT has dots): not applied.
    expect(new RegExp(PATTERNS.checkout_mandate?.pattern ?? '').test(m)).toBe(false);
    const done = expectCheckout(await p.complete(c.id, { checkout_mandate: m }));
    expect(done.status).toBe('completed');
    expect(await verifyBusiness(done)).toBe(true);
    const rows = await auditOf(p.spiffeId, '/complete', 1);
    expect(rows.at(-1)?.status).toBe(200);
  });

  it('keeps the evidence with the order: GET …/authorization, named by the completion’s audit entry', async () => {
    const p = await platform();
    const c = await p.ready();
    const m = await p.mandate(c);
    const read2 = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    const done = expectCheckout(await p.complete(c.id, { checkout_mandate: m }));
    const orderId = (done.order as { id: string }).id;
    const evidence = async (spiffe: string) => {
      const res = await fetch(`${sys.url}/api/v2/procurement/orders/${orderId}/authorization`, {
        headers: { 'x-spiffe-id': spiffe },
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const mine = await evidence(p.spiffeId);
    expect(mine.status).toBe(200);
    const sha = createHash('sha256').update(m).digest('base64url');
    expect(mine.body).toMatchObject({
      order_id: orderId,
      checkout_session_id: c.id,
      authorization: {
        type: 'ap2_checkout_mandate',
        checkout_mandate: m,
        mandate_sha256: sha,
        merchant_authorization: (c.ap2 as { merchant_authorization: string }).merchant_authorization,
        platform_profile: profileUrl,
        platform_kid: KID,
      },
    });
    // From the evidence alone: the checkout the user confirmed, and the business's signature on it.
    const claims = (await new SDJwtVcInstance({ hasher: digest }).getClaims(m)) as { checkout: Checkout };
    expect(claims.checkout.id).toBe(c.id);
    expect(await verifyBusiness(claims.checkout)).toBe(true);
    const rows = await auditOf(p.spiffeId, '/complete', 1);
    expect(rows.at(-1)?.reason).toContain(`ap2: mandate sha-256 ${sha}`);
    // The whole chain offline, from public keys only: mandate → platform key → merchant
    // signature → order → audit inclusion → signed tree head.
    const get = async (path: string) =>
      (await (
        await fetch(`${sys.url}${path}`, { headers: { 'x-spiffe-id': p.spiffeId } })
      ).json()) as unknown;
    const chain = {
      proof: await get(`/api/v2/procurement/orders/${orderId}/audit-proof`),
      auditKeys: (await get('/.well-known/audit-keys.json')) as JSONWebKeySet,
      evidence: mine.body,
      platformKeys: [publicJwk(platformKey, KID, 'ES256') as JWK],
      businessKeys,
    };
    const verdict = await verifyAuthorizedOrder(chain);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    const auth = mine.body.authorization as Record<string, unknown>;
    const bent: [string, Partial<typeof chain>][] = [
      ['another platform key', { platformKeys: [publicJwk(otherKey, KID, 'ES256') as JWK] }],
      [
        'another business key',
        { businessKeys: [{ ...(publicJwk(otherKey, String(businessKeys[0]?.kid), 'ES256') as JWK) }] },
      ],
      ['another order id', { evidence: { ...mine.body, order_id: `ord_${'0'.repeat(32)}` } }],
      [
        'an edited mandate hash',
        {
          evidence: {
            ...mine.body,
            authorization: { ...auth, mandate_sha256: sha.replace(/^./, sha[0] === 'A' ? 'B' : 'A') },
          },
        },
      ],
      [
        'another merchant authorization',
        {
          evidence: {
            ...mine.body,
            authorization: {
              ...auth,
              merchant_authorization: (read2.ap2 as { merchant_authorization: string })
                .merchant_authorization,
            },
          },
        },
      ],
    ];
    for (const [what, change] of bent)
      expect((await verifyAuthorizedOrder({ ...chain, ...change })).ok, what).toBe(false);
    // Another identity's order is the same 404 as an unknown one.
    const other = await platform();
    expect((await evidence(other.spiffeId)).status).toBe(404);
    // An order completed without AP2 has none.
    const plain = await platform(() => plainProfileUrl);
    const q = await plain.ready();
    const placed = expectCheckout(await plain.complete(q.id));
    const none = await fetch(
      `${sys.url}/api/v2/procurement/orders/${(placed.order as { id: string }).id}/authorization`,
      { headers: { 'x-spiffe-id': plain.spiffeId } },
    );
    expect(((await none.json()) as { authorization: unknown }).authorization).toBeNull();
  });

  it('works the same over the MCP binding: signed checkouts, the mandate in checkout.ap2', async () => {
    const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-ap2-mcp-${process.pid}`;
    const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
    const client = new Client({ name: 'ap2-platform', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${sys.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}`, 'ucp-agent': `profile="${profileUrl}"` } },
      }),
    );
    try {
      const meta = (write = false) => ({
        'ucp-agent': { profile: profileUrl },
        ...(write ? { 'idempotency-key': randomUUID() } : {}),
      });
      const tool = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(r.isError).toBeFalsy();
        return r.structuredContent as Checkout;
      };
      const c = await tool('create_checkout', {
        meta: meta(),
        checkout: {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        },
      });
      const u = await tool('update_checkout', {
        meta: meta(),
        id: c.id,
        checkout: {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          fulfillment: {
            methods: [
              {
                line_item_ids: ['li_0'],
                groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
              },
            ],
          },
        },
      });
      expect(await verifyBusiness(u)).toBe(true);
      const payment = {
        instruments: [
          {
            id: 'po_1',
            handler_id: 'purchase_order',
            type: 'purchase_order',
            selected: true,
            credential: { type: 'purchase_order', purchase_order_number: 'PO-AP2-MCP' },
          },
        ],
      };
      const refused = await client
        .callTool({
          name: 'complete_checkout',
          arguments: { meta: meta(true), id: c.id, checkout: { payment } },
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError & { data?: { code?: string } }).data?.code).toBe('mandate_required');
      const m = await makeMandate(u, { key: platformKey, kid: KID, holder, audience });
      const done = await tool('complete_checkout', {
        meta: meta(true),
        id: c.id,
        checkout: { payment, ap2: { checkout_mandate: m } },
      });
      expect(done.status).toBe('completed');
      expect(await verifyBusiness(done)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('does not sign, nor ask for a mandate, when the platform does not list the extension', async () => {
    const p = await platform(() => plainProfileUrl);
    const c = await p.ready();
    expect(c.ap2).toBeUndefined();
    expect((c.ucp as { capabilities: Record<string, unknown> }).capabilities[AP2]).toBeUndefined();
    expect(expectCheckout(await p.complete(c.id)).status).toBe('completed');
  });

  it('keeps a session locked when a later request comes with a profile that no longer lists AP2', async () => {
    let url = profileUrl;
    const p = await platform(() => url);
    const c = await p.ready();
    url = plainProfileUrl;
    const read = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
    expect(await verifyBusiness(read)).toBe(true);
    const r = await p.complete(c.id);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('mandate_required');
  });

  type P = Awaited<ReturnType<typeof platform>>;
  /** Each hostile completion: what the platform sends for checkout `c` (its signed body `c`). */
  const HOSTILE: [string, number, string, (p: P, c: Checkout) => Promise<unknown>][] = [
    ['no mandate', 400, 'mandate_required', async () => ({})],
    [
      'a mandate signed with a key not in the profile',
      403,
      'mandate_invalid_signature',
      (p, c) => p.mandate(c, { issuerKey: otherKey }),
    ],
    [
      'a kid the profile does not have',
      422,
      'agent_missing_key',
      (p, c) => p.mandate(c, { kid: 'someone-else' }),
    ],
    [
      'the key binding stripped',
      403,
      'mandate_invalid_signature',
      (p, c) => p.mandate(c, { noKeyBinding: true }),
    ],
    [
      'the key binding for another audience',
      403,
      'mandate_scope_mismatch',
      (p, c) => p.mandate(c, { aud: 'https://other.example/.well-known/ucp' }),
    ],
    [
      'the confirmation older than an hour',
      403,
      'mandate_expired',
      (p, c) => p.mandate(c, { iat: Math.floor(Date.now() / 1000) - 7200 }),
    ],
    [
      'an expired mandate',
      403,
      'mandate_expired',
      (p, c) => p.mandate(c, { exp: Math.floor(Date.now() / 1000) - 300 }),
    ],
    [
      'a mandate that discloses nothing',
      403,
      'mandate_scope_mismatch',
      (p, c) => p.mandate(c, { discloseNothing: true }),
    ],
    ['alg none', 403, 'mandate_invalid_signature', async (p, c) => withAlgNone(await p.mandate(c))],
    [
      'a key binding JWT with alg none',
      403,
      'mandate_invalid_signature',
      async (p, c) => withKbAlgNone(await p.mandate(c)),
    ],
    [
      'an edited total inside a valid-looking mandate',
      403,
      'merchant_authorization_invalid',
      (p, c) =>
        p.mandate({
          ...c,
          totals: (c.totals as { type: string; amount: number }[]).map((t) => ({ ...t, amount: 1 })),
        }),
    ],
    [
      'the merchant signature stripped',
      403,
      'merchant_authorization_missing',
      (p, c) => p.mandate({ ...c, ap2: undefined }),
    ],
    [
      'the merchant signature moved from another session',
      403,
      'merchant_authorization_invalid',
      async (p, c) => {
        const other = await p.ready();
        return p.mandate({ ...c, ap2: other.ap2 });
      },
    ],
    [
      'a mandate for another checkout',
      403,
      'mandate_scope_mismatch',
      async (p) => p.mandate(await p.ready()),
    ],
    [
      'another checkout, with this checkout id as nonce',
      403,
      'mandate_scope_mismatch',
      async (p, c) => p.mandate(await p.ready(), { nonce: c.id }),
    ],
    ['a mandate of 1 MB', 413, '', async () => 'e'.repeat(1024 * 1024)],
    ['a mandate that is not a string', 400, 'mandate_required', async () => ({ checkout_mandate: 42 })],
  ];

  it.each(HOSTILE)(
    'refuses %s (%i %s), completes nothing, audits the refusal',
    async (_what, status, code, make) => {
      const p = await platform();
      const c = await p.ready();
      const made = await make(p, c);
      const ap2 = typeof made === 'string' ? { checkout_mandate: made } : made;
      const r = await p.complete(c.id, ap2);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(status);
      if (code) expect(r.body.code).toBe(code);
      expect(typeof r.body.content).toBe('string');
      const after = expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`));
      expect(after.status).toBe('ready_for_complete');
      expect(after.order).toBeUndefined();
      const rows = await auditOf(p.spiffeId, '/complete', 1);
      expect(rows.at(-1)?.status).toBe(status);
      if (code) expect(rows.at(-1)?.reason).toContain(code);
    },
  );

  it('refuses a mandate replayed on a second checkout, and its reuse on the first', async () => {
    const p = await platform();
    const a = await p.ready();
    const b = await p.ready();
    const m = await p.mandate(a);
    expect(expectCheckout(await p.complete(a.id, { checkout_mandate: m })).status).toBe('completed');
    const second = await p.complete(b.id, { checkout_mandate: m });
    expect(second.status).toBe(403);
    expect(second.body.code).toBe('mandate_scope_mismatch');
    expect(expectCheckout(await p.call('GET', `/checkout-sessions/${b.id}`)).status).toBe(
      'ready_for_complete',
    );
    const again = await p.complete(a.id, { checkout_mandate: m });
    expect(again.status).toBe(409);
  });

  it('completes once when the same mandate is sent twice at once (two Idempotency-Keys)', async () => {
    const p = await platform();
    const c = await p.ready();
    const m = await p.mandate(c);
    // The same mandate, under two Idempotency-Keys at once: one completes, the other is refused.
    const [x, y] = await Promise.all([
      p.complete(c.id, { checkout_mandate: m }),
      p.complete(c.id, { checkout_mandate: m }),
    ]);
    const statuses = [x.status, y.status].sort();
    expect(statuses[0]).toBe(200);
    expect(statuses[1]).toBeGreaterThanOrEqual(403);
    expect(statuses[1]).toBeLessThan(500);
  });
});
