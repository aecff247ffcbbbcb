/**
 * The business profile (/.well-known/ucp), and what the UCP-Agent header negotiates: a part of
 * the UCP checkout suite (../checkout.suite.ts).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readUcpDocuments } from '../../../gateway/agent/ucp/schema/files.ts';
import { platformProfile, totalsOf, ucpCall } from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { rawOf, verifyUcpResponse } from '../support/response.ts';
import { expectUcp } from '../support/validate.ts';
import { type CheckoutContext, expectCheckout, FIXTURE, messages, priceOf } from './support.ts';

export function negotiationTests(t: CheckoutContext): void {
  describe('business profile', () => {
    it('serves /.well-known/ucp without authentication, valid, cacheable, with the REST and MCP endpoints', async () => {
      const res = await fetch(`${t.url()}/.well-known/ucp`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
      const doc = (await res.json()) as {
        ucp: Record<string, Record<string, { transport?: string; endpoint?: string }[]>>;
      };
      expectUcp('business_profile', doc);
      expect(doc.ucp.version).toBe('2026-04-08');
      const service = doc.ucp.services?.['dev.ucp.shopping'] ?? [];
      expect(service.map((s) => s.transport)).toEqual(['rest', 'mcp']);
      expect(service[0]?.endpoint).toMatch(/\/ucp$/);
      expect(Object.keys(doc.ucp.capabilities ?? {}).sort()).toEqual([
        'dev.ucp.common.identity_linking',
        'dev.ucp.shopping.ap2_mandate',
        'dev.ucp.shopping.buyer_consent',
        'dev.ucp.shopping.cart',
        'dev.ucp.shopping.catalog.lookup',
        'dev.ucp.shopping.catalog.search',
        'dev.ucp.shopping.checkout',
        'dev.ucp.shopping.discount',
        'dev.ucp.shopping.fulfillment',
        'dev.ucp.shopping.order',
      ]);
      expect(Object.keys(doc.ucp.payment_handlers ?? {})).toEqual(['com.example.purchase_order']);
    });

    it("publishes the payment handler's spec and schema: a platform learns what the instrument needs (issue 50)", async () => {
      const doc = (await (await fetch(`${t.url()}/.well-known/ucp`)).json()) as {
        ucp: { payment_handlers: Record<string, { spec?: string; schema?: string }[]> };
      };
      const handler = doc.ucp.payment_handlers['com.example.purchase_order']?.[0];
      expect(handler?.spec).toMatch(/\/payment-handlers\/purchase_order\/spec\.md$/);
      expect(handler?.schema).toMatch(/\/payment-handlers\/purchase_order\/schema\.json$/);
      const origin = new URL(t.url()).origin;
      const at = (u: string) => `${origin}${new URL(u).pathname}`;
      const spec = await fetch(at(handler?.spec ?? ''));
      expect(spec.status).toBe(200);
      expect(spec.headers.get('content-type')).toMatch(/^text\/markdown/);
      expect(await spec.text()).toContain('purchase_order_number');
      const res = await fetch(at(handler?.schema ?? ''));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/schema\+json/);
      const schema = (await res.json()) as { $id: string; name: string; $defs: Record<string, unknown> };
      expect(schema.$id).toBe(handler?.schema);
      expect(schema.name).toBe('com.example.purchase_order');
      // Judged as a platform would: compiled beside the release's schemas, its business variant
      // accepts the profile's own entry, and its instrument refuses one without a number.
      // Formats are not what this judges (the release's uri fields would warn unknown).
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
      for (const d of readUcpDocuments()) ajv.addSchema(d.schema);
      ajv.addSchema(schema);
      const business = ajv.getSchema(`${schema.$id}#/$defs/com.example.purchase_order/business_schema`);
      const instrument = ajv.getSchema(`${schema.$id}#/$defs/purchase_order_instrument`);
      expect(business?.(handler), JSON.stringify(business?.errors)).toBe(true);
      expect(business?.({ ...handler, config: { currency: 'usd' } })).toBe(false);
      const good = {
        id: 'po_1',
        handler_id: 'purchase_order',
        type: 'purchase_order',
        credential: { type: 'purchase_order', purchase_order_number: 'PO-9' },
      };
      expect(instrument?.(good)).toBe(true);
      expect(instrument?.({ ...good, credential: { type: 'purchase_order' } })).toBe(false);
    });
  });

  describe('negotiation and the UCP-Agent header', () => {
    it.each([
      ['missing', null, 400, 'invalid_profile_url'],
      ['not a dictionary', 'profile=<<', 400, 'invalid_profile_url'],
      ['a token, not a string', 'profile=abc', 400, 'invalid_profile_url'],
      ['not a URL', 'profile="nope"', 400, 'invalid_profile_url'],
      ['with credentials', 'profile="http://u:p@127.0.0.1/x"', 400, 'invalid_profile_url'],
    ])('refuses a UCP-Agent header that is %s: %i %s', async (_w, header, status, code) => {
      const p = await t.platform();
      const r = await p.call('GET', '/checkout-sessions/cs_00000000000000000000000000000000', undefined, {
        'ucp-agent': header,
      });
      expect(r.status).toBe(status);
      expect(r.body.code).toBe(code);
    });

    it('answers 424 for a profile that cannot be fetched, 422 for one that is malformed or of another version', async () => {
      const p = await t.platform();
      const cases: [string, unknown, number, number, string][] = [
        ['/gone.json', {}, 404, 424, 'profile_unreachable'],
        ['/not-json.json', 'not json', 200, 422, 'profile_malformed'],
        ['/invalid.json', { ucp: { version: '2026-04-08' } }, 200, 422, 'profile_malformed'],
        ['/old.json', platformProfile({ version: '2026-01-11' }), 200, 422, 'version_unsupported'],
      ];
      for (const [path, body, served, status, code] of cases) {
        const at = t.profiles.set(path, body, served);
        const r = await p.call(
          'POST',
          '/checkout-sessions',
          { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
          {
            'ucp-agent': `profile="${at}"`,
          },
        );
        expect([path, r.status, r.body.code]).toEqual([path, status, code]);
        expect(typeof r.body.content).toBe('string');
      }
    });

    it('signs its answers (RFC 9421 @status, Content-Digest) with a key the profile publishes, on any replica', async () => {
      const { key } = await t.platform();
      const headers = { 'ucp-agent': `profile="${t.profileUrl}"`, authorization: `Bearer ${key}` };
      const created = await rawOf(
        await fetch(`${t.url()}/ucp/checkout-sessions`, {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'idempotency-key': `sig-${t.label}-${Date.now()}`,
          },
          body: JSON.stringify({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] }),
        }),
      );
      const unknown = await rawOf(
        await fetch(`${t.url()}/ucp/checkout-sessions/cs_${'0'.repeat(32)}`, { headers }),
      );
      // The keys as another replica publishes them (with several, consecutive calls alternate).
      const keys = (
        (await (await fetch(`${t.url()}/.well-known/ucp`)).json()) as {
          signing_keys: Record<string, unknown>[];
        }
      ).signing_keys;
      expect([created.status, unknown.status]).toEqual([201, 404]);
      for (const r of [created, unknown])
        expect(await verifyUcpResponse(r, keys)).toMatchObject({ ok: true });
    });

    it('answers capabilities_incompatible (200, error_response) when the platform has no checkout', async () => {
      const p = await t.platform();
      const at = t.profiles.set('/order-only.json', platformProfile({ capabilities: ['order'] }));
      const r = await p.call(
        'POST',
        '/checkout-sessions',
        { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
        {
          'ucp-agent': `profile="${at}"`,
        },
      );
      expect(r.status).toBe(200);
      expectUcp('error_response', r.body);
      expect(messages(r.body)[0]?.code).toBe('capabilities_incompatible');
    });

    it('negotiates the intersection: without discount in the platform profile, checkouts have no discounts', async () => {
      const p = await t.platform();
      const at = t.profiles.set(
        '/no-discount.json',
        platformProfile({ capabilities: ['checkout', 'fulfillment'] }),
      );
      const r = await p.call(
        'POST',
        '/checkout-sessions',
        {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          discounts: { codes: [FIXTURE.code1] },
        },
        {
          'ucp-agent': `profile="${at}"`,
        },
      );
      const c = expectCheckout(r, 201);
      expect(Object.keys((c.ucp as { capabilities: object }).capabilities).sort()).toEqual([
        'dev.ucp.shopping.checkout',
        'dev.ucp.shopping.fulfillment',
      ]);
      expect(c.discounts).toBeUndefined();
      expect(totalsOf(c).total).toBe(priceOf(c));
    });

    it('buyer consent (issue 50): negotiated, validated, echoed and kept with the order; dropped when not negotiated', async () => {
      const p = await t.platform();
      const at = t.profiles.set(
        '/consent.json',
        platformProfile({ capabilities: ['checkout', 'order', 'fulfillment', 'buyer_consent'] }),
      );
      const agent = { 'ucp-agent': `profile="${at}"` };
      const consent = { analytics: false, marketing: true, sale_of_data: false };
      const buyer = { email: 'jane.doe@example.com', first_name: 'Jane', consent };
      const line_items = [{ item: { id: FIXTURE.itemA }, quantity: 1 }];
      // A choice that is not a boolean is refused at its path, nothing created.
      const bad = await p.call(
        'POST',
        '/checkout-sessions',
        { line_items, buyer: { ...buyer, consent: { marketing: 'yes' } } },
        agent,
      );
      expect(bad.status).toBe(400);
      expect(bad.body.path).toBe('$.buyer.consent.marketing');
      const c = expectCheckout(
        await p.call(
          'POST',
          '/checkout-sessions',
          {
            line_items,
            buyer,
            fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
          },
          agent,
        ),
        201,
      );
      expect(Object.keys((c.ucp as { capabilities: object }).capabilities)).toContain(
        'dev.ucp.shopping.buyer_consent',
      );
      expect(c.buyer).toEqual(buyer);
      const u = expectCheckout(
        await p.call(
          'PUT',
          `/checkout-sessions/${c.id}`,
          {
            line_items,
            fulfillment: {
              methods: [
                {
                  line_item_ids: ['li_0'],
                  groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
                },
              ],
            },
          },
          agent,
        ),
      );
      expect(u.buyer).toEqual(buyer);
      const done = expectCheckout(
        await p.call('POST', `/checkout-sessions/${c.id}/complete`, p.completeBody('PO-CONSENT-1'), agent),
      );
      expect(done.status).toBe('completed');
      const orderId = (done.order as { id: string }).id;
      const read = await t.sys.gql(
        'query($id: ID!) { purchaseOrder(orderId: $id) { buyerConsent { analytics preferences marketing saleOfData } } }',
        { token: await t.sys.token(['orders:read']), variables: { id: orderId } },
      );
      expect(read.errors).toBeUndefined();
      expect((read.data as { purchaseOrder: { buyerConsent: unknown } }).purchaseOrder.buyerConsent).toEqual({
        analytics: false,
        preferences: null,
        marketing: true,
        saleOfData: false,
      });
      // Not negotiated (the suite's default profile has no buyer_consent): the field is unknown
      // to the business, dropped, and never reaches an order.
      const plain = await p.create({ line_items, buyer });
      expect(plain.buyer).toEqual({ email: buyer.email, first_name: buyer.first_name });
    });

    it('fetches a profile once and serves the next requests from the cache', async () => {
      const p = await t.platform();
      const at = t.profiles.set('/cached.json', platformProfile());
      for (let i = 0; i < 3; i++)
        await p.call(
          'POST',
          '/checkout-sessions',
          { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
          {
            'ucp-agent': `profile="${at}"`,
          },
        );
      expect(t.profiles.hits('/cached.json')).toBeLessThanOrEqual(t.sys.urls.length);
    });

    it('refuses a call without credentials (401) and a key without orders:create (403)', async () => {
      const none = await ucpCall(t.url(), { profileUrl: t.profileUrl }, 'POST', '/checkout-sessions', {
        line_items: [],
      });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Bearer');
      const { key } = await issueKey(t.sys, {
        spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-${t.label}-readonly`,
        scopes: ['orders:read'],
        ucpProfile: t.profiles.origin,
      });
      const r = await ucpCall(t.url(), { key, profileUrl: t.profileUrl }, 'POST', '/checkout-sessions', {
        line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
      });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('insufficient_scope');
    });
  });
}
