/**
 * The UCP business as a platform that knows only the published specification (v2026-04-08)
 * uses it, run against a topology: the profile, and a Node port of
 * Universal-Commerce-Protocol/conformance's lifecycle, idempotency, business-logic, validation
 * and order tests (docs/ucp-conformance-plan.md says what each checks and where the port
 * follows the tag instead of the suite's 2026-01-11). Every response is validated against the
 * vendored schemas. With several gateway replicas, consecutive calls go to different replicas.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readUcpDocuments } from '../../gateway/agent/ucp/schema/files.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  totalsOf,
  UCP_ADDRESS,
  type UcpReply,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import type { Gql } from '../acp/support/acp.ts';
import { issueKey } from '../acp/support/acp.ts';
import { rawOf, verifyUcpResponse } from './support/response.ts';
import { expectUcp } from './support/validate.ts';

export interface UcpSystem extends Gql {
  readonly urls: readonly string[];
  close(): Promise<void>;
}

/** The fixture catalog's roles (docs/ucp-conformance-plan.md, "Fixture roles"). */
export const FIXTURE = {
  itemA: 'SKU-ABC-000001',
  itemB: 'SKU-ABC-000002',
  /** The flower shop's `gardenias`: a catalog product with 0 units in stock (checked in beforeAll). */
  outOfStock: 'SKU-TOL-000010',
  unknown: 'pink_wumpus',
  unknownSku: 'SKU-ZZZ-999999',
  code1: 'UCPTEN',
  code2: 'UCPFIVE',
  address: UCP_ADDRESS,
} as const;

/** Code 1: 10 % off the cart; code 2: 5.00 off the cart (the conformance suite's 10OFF and FIXED500). */
const RULES = [
  {
    version: '2.1',
    promotion_id: 'UCP-TEST-TEN',
    name: '10% off with UCPTEN',
    priority: 3,
    status: 'ACTIVE',
    coupon_codes: [FIXTURE.code1],
    conditions: { all: [{ fact: 'cart.subtotal', operator: 'greater_than_inclusive', value: 1 }] },
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 10 }],
  },
  {
    version: '2.1',
    promotion_id: 'UCP-TEST-FIVE',
    name: '5.00 off with UCPFIVE',
    priority: 2,
    status: 'ACTIVE',
    coupon_codes: [FIXTURE.code2],
    conditions: { all: [{ fact: 'cart.subtotal', operator: 'greater_than_inclusive', value: 10 }] },
    actions: [{ type: 'FIXED_AMOUNT_DISCOUNT', value: 5, currency: 'USD' }],
  },
];

const STOCK = 'query($skus: [ID!]!) { products(skus: $skus) { sku inventoryLevel } }';
const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';
const APPROVE = 'mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { orderId status } }';
const UPSERT = 'mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId } }';

type Checkout = Record<string, unknown> & { id: string; status: string };

/** A checkout answer: the status, and a body valid against checkout with both extensions. */
export function expectCheckout(r: UcpReply, status = 200): Checkout {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  expectUcp('checkout_with_discount_and_fulfillment', r.body);
  expect(r.body.currency).toBe('USD');
  return r.body as Checkout;
}

const priceOf = (c: Checkout, i = 0) =>
  (c.line_items as { item: { price: number } }[])[i]?.item.price as number;
const lineTotals = (c: Checkout, i = 0) =>
  totalsOf((c.line_items as { totals: unknown }[])[i] as { totals: unknown });
const messages = (c: Record<string, unknown>) =>
  (c.messages ?? []) as { type: string; code?: string; path?: string; severity?: string; content: string }[];

export function ucpCheckoutSuite(label: string, start: () => Promise<UcpSystem>): void {
  describe(`UCP checkout (${label})`, () => {
    let sys: UcpSystem;
    let profiles: ProfileServer;
    let profileUrl: string;
    let step = 0;
    let platforms = 0;
    /** Item A's units in stock (the generated catalog's 50): above it a line is out of stock. */
    let stockOfA = 0;
    const url = () => sys.urls[step++ % sys.urls.length] as string;

    beforeAll(async () => {
      sys = await start();
      profiles = await startProfileServer();
      profileUrl = profiles.set('/platform.json', platformProfile());
      // The fixture's stock roles, read from the catalog: none of the out-of-stock item, and
      // item A's stock under the merchant's quantity limit (999), so a PUT over it is a stock
      // question, not a 400.
      const stock = await sys.gql(STOCK, { variables: { skus: [FIXTURE.itemA, FIXTURE.outOfStock] } });
      expect(stock.errors).toBeUndefined();
      const [a, none] = (stock.data as { products: { inventoryLevel: number }[] }).products;
      expect(none?.inventoryLevel).toBe(0);
      stockOfA = a?.inventoryLevel ?? 0;
      expect(stockOfA).toBeGreaterThan(2);
      expect(stockOfA).toBeLessThan(999);
      const admin = await sys.token(['promotions:admin']);
      for (const rule of RULES) {
        const r = await sys.gql(UPSERT, { token: admin, variables: { rule } });
        expect(r.errors).toBeUndefined();
      }
    }, 240_000);
    afterAll(async () => {
      await profiles?.close();
      await sys?.close();
    });

    /** A platform of its own: its agent identity, key, budget, block and bucket. */
    async function platform(policy?: Record<string, string>) {
      const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-${label}-${++platforms}`;
      if (policy) {
        const r = await sys.gql(SET, {
          token: await sys.token(['spend:admin']),
          variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
        });
        expect(r.errors).toBeUndefined();
      }
      const { key } = await issueKey(sys, {
        spiffeId,
        agentId: `agent-ucp-${label}-${platforms}-${process.pid}`,
        ucpProfile: profiles.origin,
      });
      const call = (
        method: 'GET' | 'POST' | 'PUT',
        path: string,
        body?: unknown,
        headers?: Record<string, string | null>,
      ) => ucpCall(url(), { key, profileUrl }, method, path, body, headers);
      const create = async (
        body: Record<string, unknown> = { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
      ) => {
        expectUcp('checkout_with_discount_and_fulfillment', body, { request: 'create' });
        return expectCheckout(await call('POST', '/checkout-sessions', body), 201);
      };
      const update = (id: string, body: Record<string, unknown>) => {
        expectUcp('checkout_with_discount_and_fulfillment', body, { request: 'update' });
        return call('PUT', `/checkout-sessions/${id}`, body);
      };
      /** A checkout with item A and the shipping address and option selected (ready to complete). */
      const ready = async (quantity = 1) => {
        const c = await create({
          line_items: [{ item: { id: FIXTURE.itemA }, quantity }],
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        });
        const u = expectCheckout(
          await update(c.id, {
            line_items: [{ item: { id: FIXTURE.itemA }, quantity }],
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
      const completeBody = (po = 'PO-UCP-1') => ({
        payment: {
          instruments: [
            {
              id: 'po_1',
              handler_id: 'purchase_order',
              type: 'purchase_order',
              selected: true,
              credential: { type: 'purchase_order', purchase_order_number: po },
            },
          ],
        },
      });
      const complete = (id: string, po?: string, headers?: Record<string, string | null>) =>
        call('POST', `/checkout-sessions/${id}/complete`, completeBody(po), headers);
      const cancel = (id: string, headers?: Record<string, string | null>) =>
        call('POST', `/checkout-sessions/${id}/cancel`, undefined, headers);
      return { spiffeId, key, call, create, update, ready, complete, completeBody, cancel };
    }

    describe('business profile', () => {
      it('serves /.well-known/ucp without authentication, valid, cacheable, with the REST and MCP endpoints', async () => {
        const res = await fetch(`${url()}/.well-known/ucp`);
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
        const doc = (await (await fetch(`${url()}/.well-known/ucp`)).json()) as {
          ucp: { payment_handlers: Record<string, { spec?: string; schema?: string }[]> };
        };
        const handler = doc.ucp.payment_handlers['com.example.purchase_order']?.[0];
        expect(handler?.spec).toMatch(/\/payment-handlers\/purchase_order\/spec\.md$/);
        expect(handler?.schema).toMatch(/\/payment-handlers\/purchase_order\/schema\.json$/);
        const origin = new URL(url()).origin;
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
        const p = await platform();
        const r = await p.call('GET', '/checkout-sessions/cs_00000000000000000000000000000000', undefined, {
          'ucp-agent': header,
        });
        expect(r.status).toBe(status);
        expect(r.body.code).toBe(code);
      });

      it('answers 424 for a profile that cannot be fetched, 422 for one that is malformed or of another version', async () => {
        const p = await platform();
        const cases: [string, unknown, number, number, string][] = [
          ['/gone.json', {}, 404, 424, 'profile_unreachable'],
          ['/not-json.json', 'not json', 200, 422, 'profile_malformed'],
          ['/invalid.json', { ucp: { version: '2026-04-08' } }, 200, 422, 'profile_malformed'],
          ['/old.json', platformProfile({ version: '2026-01-11' }), 200, 422, 'version_unsupported'],
        ];
        for (const [path, body, served, status, code] of cases) {
          const at = profiles.set(path, body, served);
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
        const { key } = await platform();
        const headers = { 'ucp-agent': `profile="${profileUrl}"`, authorization: `Bearer ${key}` };
        const created = await rawOf(
          await fetch(`${url()}/ucp/checkout-sessions`, {
            method: 'POST',
            headers: {
              ...headers,
              'content-type': 'application/json',
              'idempotency-key': `sig-${label}-${Date.now()}`,
            },
            body: JSON.stringify({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] }),
          }),
        );
        const unknown = await rawOf(
          await fetch(`${url()}/ucp/checkout-sessions/cs_${'0'.repeat(32)}`, { headers }),
        );
        // The keys as another replica publishes them (with several, consecutive calls alternate).
        const keys = (
          (await (await fetch(`${url()}/.well-known/ucp`)).json()) as {
            signing_keys: Record<string, unknown>[];
          }
        ).signing_keys;
        expect([created.status, unknown.status]).toEqual([201, 404]);
        for (const r of [created, unknown])
          expect(await verifyUcpResponse(r, keys)).toMatchObject({ ok: true });
      });

      it('answers capabilities_incompatible (200, error_response) when the platform has no checkout', async () => {
        const p = await platform();
        const at = profiles.set('/order-only.json', platformProfile({ capabilities: ['order'] }));
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
        const p = await platform();
        const at = profiles.set(
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
        const p = await platform();
        const at = profiles.set(
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
        const read = await sys.gql(
          'query($id: ID!) { purchaseOrder(orderId: $id) { buyerConsent { analytics preferences marketing saleOfData } } }',
          { token: await sys.token(['orders:read']), variables: { id: orderId } },
        );
        expect(read.errors).toBeUndefined();
        expect(
          (read.data as { purchaseOrder: { buyerConsent: unknown } }).purchaseOrder.buyerConsent,
        ).toEqual({
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
        const p = await platform();
        const at = profiles.set('/cached.json', platformProfile());
        for (let i = 0; i < 3; i++)
          await p.call(
            'POST',
            '/checkout-sessions',
            { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }] },
            {
              'ucp-agent': `profile="${at}"`,
            },
          );
        expect(profiles.hits('/cached.json')).toBeLessThanOrEqual(sys.urls.length);
      });

      it('refuses a call without credentials (401) and a key without orders:create (403)', async () => {
        const none = await ucpCall(url(), { profileUrl }, 'POST', '/checkout-sessions', { line_items: [] });
        expect(none.status).toBe(401);
        expect(none.headers.get('www-authenticate')).toContain('Bearer');
        const { key } = await issueKey(sys, {
          spiffeId: `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-${label}-readonly`,
          scopes: ['orders:read'],
          ucpProfile: profiles.origin,
        });
        const r = await ucpCall(url(), { key, profileUrl }, 'POST', '/checkout-sessions', {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        });
        expect(r.status).toBe(403);
        expect(r.body.code).toBe('insufficient_scope');
      });
    });

    describe('lifecycle (checkout_lifecycle_test.py)', () => {
      it('create_checkout: 201, a valid checkout, Location', async () => {
        const p = await platform();
        const r = await p.call('POST', '/checkout-sessions', {
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
        });
        const c = expectCheckout(r, 201);
        expect(c.id).toMatch(/^cs_/);
        expect(r.headers.get('location')).toBe(`/ucp/checkout-sessions/${c.id}`);
        expect((c.ucp as { payment_handlers: object }).payment_handlers).toHaveProperty([
          'com.example.purchase_order',
        ]);
      });

      it('get_checkout and update_checkout', async () => {
        const p = await platform();
        const c = await p.create();
        expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).id).toBe(c.id);
        const u = expectCheckout(
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
        );
        expect((u.line_items as { quantity: number }[])[0]?.quantity).toBe(2);
      });

      it('cancel with Content-Type: application/json and an empty body (the REST binding defines no body)', async () => {
        const p = await platform();
        const c = await p.create();
        const r = await p.cancel(c.id, { 'content-type': 'application/json' });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(expectCheckout(r).status).toBe('canceled');
      });

      it('cancel_checkout, cancel_is_idempotent, cannot_update/complete_canceled_checkout', async () => {
        const p = await platform();
        const c = await p.create();
        expect(expectCheckout(await p.cancel(c.id)).status).toBe('canceled');
        // 409 invalid_state (issue 50: checkout.md's "error indicating the operation is not
        // allowed", as the reference server answers), the session unchanged.
        for (const r of [
          await p.cancel(c.id),
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
          await p.complete(c.id),
        ]) {
          expect(r.status, JSON.stringify(r.body)).toBe(409);
          expect(r.body).toMatchObject({ code: 'invalid_state' });
          expect(String(r.body.content)).toContain('canceled');
        }
        expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('canceled');
      });

      it('invalid_state is kept under its Idempotency-Key: a replay answers the same 409', async () => {
        const p = await platform();
        const c = await p.create();
        expect(expectCheckout(await p.cancel(c.id)).status).toBe('canceled');
        const h = { 'idempotency-key': `late-${label}-${Math.random().toString(36).slice(2)}` };
        const body = { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 3 }] };
        const first = await p.call('PUT', `/checkout-sessions/${c.id}`, body, h);
        const again = await p.call('PUT', `/checkout-sessions/${c.id}`, body, h);
        expect(first.status).toBe(409);
        expect(again.status).toBe(409);
        expect(again.body).toEqual(first.body);
      });

      it('complete_checkout: completed, with order id and permalink; complete/update/cancel after it are refused', async () => {
        const p = await platform();
        const c = await p.ready();
        const done = expectCheckout(await p.complete(c.id, 'PO-UCP-42'));
        expect(done.status).toBe('completed');
        const order = done.order as { id: string; permalink_url: string };
        expect(order.id).toMatch(/^ord_/);
        expect(order.permalink_url).toMatch(new RegExp(`/ucp/orders/${order.id}$`));
        for (const r of [
          await p.complete(c.id),
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 2 }] }),
          await p.cancel(c.id),
        ]) {
          expect(r.status, JSON.stringify(r.body)).toBe(409);
          expect(r.body).toMatchObject({ code: 'invalid_state' });
          expect(String(r.body.content)).toContain('completed');
        }
        expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('completed');
      });
    });

    describe('idempotency (idempotency_test.py)', () => {
      /** The first answer and its replay: both a valid checkout with `status`, the same body. */
      const sameTwice = async (send: (h: Record<string, string>) => Promise<UcpReply>, status = 200) => {
        const h = { 'idempotency-key': `idem-${label}-${Math.random().toString(36).slice(2)}` };
        const a = await send(h);
        const b = await send(h);
        expectCheckout(a, status);
        expectCheckout(b, status);
        expect(b.body).toEqual(a.body);
        expect(b.headers.get('idempotent-replayed')).toBe('true');
        return h;
      };

      it('idempotency_create: the same key and body replay; another body is 409', async () => {
        const p = await platform();
        const body = (q: number) => ({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: q }] });
        const h = await sameTwice((x) => p.call('POST', '/checkout-sessions', body(1), x), 201);
        const conflict = await p.call('POST', '/checkout-sessions', body(2), h);
        expect(conflict.status).toBe(409);
        expect(conflict.body.code).toBe('idempotency_conflict');
      });

      it('idempotency_update: quantity 2 replayed, 3 with the same key is 409', async () => {
        const p = await platform();
        const c = await p.create();
        const body = (q: number) => ({ line_items: [{ item: { id: FIXTURE.itemA }, quantity: q }] });
        const h = await sameTwice((x) => p.call('PUT', `/checkout-sessions/${c.id}`, body(2), x));
        expect((await p.call('PUT', `/checkout-sessions/${c.id}`, body(3), h)).status).toBe(409);
      });

      it('idempotency_complete: replayed; another credential with the same key is 409', async () => {
        const p = await platform();
        const c = await p.ready();
        const h = await sameTwice((x) => p.complete(c.id, 'PO-SAME', x));
        expect((await p.complete(c.id, 'PO-OTHER', h)).status).toBe(409);
      });

      it('idempotency_cancel: the same key twice, both 200 with identical bodies (no body: by key alone)', async () => {
        const p = await platform();
        const c = await p.create();
        await sameTwice((x) => p.cancel(c.id, x));
      });
    });

    describe('business logic (business_logic_test.py)', () => {
      it('totals_calculation_on_create: the client title is ignored; line and checkout totals are the price', async () => {
        const p = await platform();
        const c = await p.create({
          line_items: [{ item: { id: FIXTURE.itemA, title: 'Client title' }, quantity: 1 }],
        });
        const price = priceOf(c);
        expect(Number.isInteger(price) && price > 0).toBe(true);
        expect((c.line_items as { item: { title: string } }[])[0]?.item.title).not.toBe('Client title');
        expect(lineTotals(c)).toMatchObject({ subtotal: price, total: price });
        expect(totalsOf(c)).toMatchObject({ subtotal: price, total: price });
      });

      it('totals_recalculation_on_update: 2 × A + B', async () => {
        const p = await platform();
        const c = await p.create();
        const u = expectCheckout(
          await p.update(c.id, {
            line_items: [
              { item: { id: FIXTURE.itemA }, quantity: 2 },
              { item: { id: FIXTURE.itemB }, quantity: 1 },
            ],
          }),
        );
        expect(totalsOf(u).subtotal).toBe(2 * priceOf(u, 0) + priceOf(u, 1));
        expect(totalsOf(u).total).toBe(totalsOf(u).subtotal);
      });

      it('an item on two lines (issue 50): accepted, priced as the cart quote of the item once, grouped and ordered line by line', async () => {
        const p = await platform();
        const lineItems = [
          { item: { id: FIXTURE.itemA }, quantity: 1 },
          { item: { id: FIXTURE.itemB }, quantity: 1 },
          { item: { id: FIXTURE.itemA }, quantity: 2 },
        ];
        const c = await p.create({
          line_items: lineItems,
          discounts: { codes: [FIXTURE.code1] },
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        });
        const quote = (await (
          await fetch(
            `${url()}/cart/quote?line=${FIXTURE.itemA}:3&line=${FIXTURE.itemB}:1&coupon=${FIXTURE.code1}&currency=USD&region=US`,
          )
        ).json()) as { total: number; discountTotal: number };
        expect(totalsOf(c).total).toBe(Math.round(quote.total * 100));
        expect(-(totalsOf(c).items_discount ?? 0)).toBe(Math.round(quote.discountTotal * 100));
        const lines = c.line_items as { id: string; item: { id: string }; quantity: number }[];
        expect(lines.map((l) => [l.id, l.item.id, l.quantity])).toEqual([
          ['li_0', FIXTURE.itemA, 1],
          ['li_1', FIXTURE.itemB, 1],
          ['li_2', FIXTURE.itemA, 2],
        ]);
        expect(priceOf(c, 2)).toBe(priceOf(c, 0));
        // Fulfilment groups every line, the repeated item's two lines included.
        const method = (c.fulfillment as { methods: { line_item_ids: string[] }[] }).methods[0];
        expect(method?.line_item_ids).toEqual(['li_0', 'li_1', 'li_2']);
        const u = expectCheckout(
          await p.update(c.id, {
            line_items: lineItems,
            discounts: { codes: [FIXTURE.code1] },
            fulfillment: {
              methods: [
                {
                  line_item_ids: ['li_0', 'li_1', 'li_2'],
                  groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
                },
              ],
            },
          }),
        );
        expect(u.status).toBe('ready_for_complete');
        const done = expectCheckout(await p.complete(c.id, 'PO-UCP-REPEAT'));
        expect(done.status).toBe('completed');
        // Stock counts the item's lines together: each line under the stock, their sum over it.
        const fresh = await p.create();
        const over = expectCheckout(
          await p.update(fresh.id, {
            line_items: [
              { item: { id: FIXTURE.itemA }, quantity: stockOfA },
              { item: { id: FIXTURE.itemA }, quantity: 1 },
            ],
          }),
        );
        expect(
          messages(over)
            .filter((m) => m.code === 'out_of_stock')
            .map((m) => m.path),
        ).toEqual(['$.line_items[0]', '$.line_items[1]']);
      });

      it('discount_flow: code 1 takes 10 %, named in discounts.applied', async () => {
        const p = await platform();
        const c = await p.create();
        const u = expectCheckout(
          await p.update(c.id, {
            line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
            discounts: { codes: [FIXTURE.code1] },
          }),
        );
        const applied = (u.discounts as { applied: { code?: string; amount: number }[] }).applied;
        expect(applied.map((a) => a.code)).toEqual([FIXTURE.code1]);
        const price = priceOf(u);
        expect(applied[0]?.amount).toBe(Math.round(price / 10));
        expect(totalsOf(u).total).toBe(price - (applied[0]?.amount ?? 0));
        expect(totalsOf(u).items_discount).toBe(-(applied[0]?.amount ?? 0));
      });

      it('multiple_discounts_accepted and fixed_amount_discount: codes 1 and 2 both applied, integer amounts', async () => {
        const p = await platform();
        const fixed = await p.create({
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          discounts: { codes: [FIXTURE.code2] },
        });
        const one = (fixed.discounts as { applied: { amount: number; code?: string }[] }).applied;
        expect(one).toEqual([expect.objectContaining({ code: FIXTURE.code2, amount: 500 })]);
        expect(totalsOf(fixed).total).toBe(priceOf(fixed) - 500);
        const both = await p.create({
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          discounts: { codes: [FIXTURE.code1, FIXTURE.code2] },
        });
        const applied = (both.discounts as { applied: { amount: number; code?: string }[] }).applied;
        expect(applied.map((a) => a.code).sort()).toEqual([FIXTURE.code1, FIXTURE.code2].sort());
        expect(applied.every((a) => Number.isInteger(a.amount))).toBe(true);
        expect(totalsOf(both).total).toBe(priceOf(both) - applied.reduce((n, a) => n + a.amount, 0));
      });

      it('multiple_discounts_one_rejected: the unknown code is left out and reported as discount_code_invalid', async () => {
        const p = await platform();
        const c = await p.create({
          line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }],
          discounts: { codes: [FIXTURE.code1, 'NO-SUCH-CODE'] },
        });
        const applied = (c.discounts as { applied: { code?: string }[] }).applied;
        expect(applied.map((a) => a.code)).toEqual([FIXTURE.code1]);
        expect(messages(c)).toContainEqual(
          expect.objectContaining({
            type: 'warning',
            code: 'discount_code_invalid',
            path: '$.discounts.codes[1]',
          }),
        );
      });

      it('buyer_info_persistence: the buyer persists through GET', async () => {
        const p = await platform();
        const c = await p.create();
        const buyer = { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' };
        expectCheckout(
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 1 }], buyer }),
        );
        expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).buyer).toEqual(buyer);
      });
    });

    describe('validation (validation_test.py)', () => {
      it('product_not_found: a create with only unknown items is an error_response (200), no checkout', async () => {
        const p = await platform();
        for (const id of [FIXTURE.unknown, FIXTURE.unknownSku]) {
          const r = await p.call('POST', '/checkout-sessions', {
            line_items: [{ item: { id }, quantity: 1 }],
          });
          expect(r.status).toBe(200);
          expectUcp('error_response', r.body);
          expect(messages(r.body)[0]).toMatchObject({
            type: 'error',
            code: 'not_found',
            severity: 'unrecoverable',
          });
        }
      });

      it('an unknown item beside a known one: the checkout, incomplete, with not_found at that line', async () => {
        const p = await platform();
        const c = await p.create({
          line_items: [
            { item: { id: FIXTURE.itemA }, quantity: 1 },
            { item: { id: FIXTURE.unknownSku }, quantity: 1 },
          ],
        });
        expect(c.status).toBe('incomplete');
        expect(messages(c)).toContainEqual(
          expect.objectContaining({ code: 'not_found', path: '$.line_items[1]' }),
        );
      });

      it('out_of_stock: a create with only the out-of-stock item is an error_response (200) with out_of_stock, no checkout', async () => {
        const p = await platform();
        const r = await p.call('POST', '/checkout-sessions', {
          line_items: [{ item: { id: FIXTURE.outOfStock }, quantity: 1 }],
        });
        expect(r.status).toBe(200);
        expectUcp('error_response', r.body);
        expect((r.body.ucp as { status: string }).status).toBe('error');
        expect(r.body.id).toBeUndefined();
        expect(messages(r.body)[0]).toMatchObject({
          type: 'error',
          code: 'out_of_stock',
          path: '$.line_items[0]',
          severity: 'unrecoverable',
        });
      });

      it('out_of_stock beside an in-stock line: the checkout, incomplete, with a recoverable out_of_stock at that line; completion refused', async () => {
        const p = await platform();
        const lines = [
          { item: { id: FIXTURE.itemA }, quantity: 1 },
          { item: { id: FIXTURE.outOfStock }, quantity: 1 },
        ];
        const c = await p.create({
          line_items: lines,
          fulfillment: { methods: [{ type: 'shipping', destinations: [FIXTURE.address] }] },
        });
        expect(c.status).toBe('incomplete');
        const stockMessages = messages(c).filter((m) => m.code === 'out_of_stock');
        expect(stockMessages).toEqual([
          expect.objectContaining({ type: 'error', path: '$.line_items[1]', severity: 'recoverable' }),
        ]);
        // Priced all the same: the totals are what the lines cost.
        expect(totalsOf(c).subtotal).toBe(priceOf(c, 0) + priceOf(c, 1));
        // Fulfillment selected: still incomplete, and completion places no order.
        const u = expectCheckout(
          await p.update(c.id, {
            line_items: lines,
            fulfillment: {
              methods: [
                {
                  line_item_ids: ['li_0', 'li_1'],
                  groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
                },
              ],
            },
          }),
        );
        expect(u.status).toBe('incomplete');
        const after = expectCheckout(await p.complete(c.id));
        expect(after.status).toBe('incomplete');
        expect(after.order).toBeUndefined();
        expect(messages(after)).toContainEqual(
          expect.objectContaining({ code: 'out_of_stock', path: '$.line_items[1]' }),
        );
        // Without the out-of-stock line it completes.
        const fixed = expectCheckout(
          await p.update(c.id, {
            line_items: [lines[0]],
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
        expect(fixed.status).toBe('ready_for_complete');
        expect(expectCheckout(await p.complete(c.id)).status).toBe('completed');
      });

      it('update_inventory_validation: a PUT over the stock is out_of_stock at $.line_items[0], not ready; the whole stock is fine', async () => {
        const p = await platform();
        const c = await p.ready();
        const over = expectCheckout(
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: stockOfA + 1 }] }),
        );
        expect(over.status).toBe('incomplete');
        expect(messages(over)).toContainEqual(
          expect.objectContaining({
            type: 'error',
            code: 'out_of_stock',
            path: '$.line_items[0]',
            severity: 'recoverable',
          }),
        );
        expect(messages(over).find((m) => m.code === 'out_of_stock')?.content).toContain(
          `${stockOfA} available`,
        );
        const all = expectCheckout(
          await p.update(c.id, { line_items: [{ item: { id: FIXTURE.itemA }, quantity: stockOfA }] }),
        );
        expect(messages(all).some((m) => m.code === 'out_of_stock')).toBe(false);
        expect(all.status).toBe('ready_for_complete');
      });

      it('structured_error_messages: the out-of-stock error is structured, each message a valid message.json', async () => {
        const p = await platform();
        const bodies = [
          (
            await p.call('POST', '/checkout-sessions', {
              line_items: [{ item: { id: FIXTURE.outOfStock }, quantity: 1 }],
            })
          ).body,
          await p.create({
            line_items: [
              { item: { id: FIXTURE.itemA }, quantity: 1 },
              { item: { id: FIXTURE.outOfStock }, quantity: 2 },
            ],
          }),
        ];
        expectUcp('error_response', bodies[0]);
        for (const body of bodies) {
          const stock = messages(body).filter((m) => m.code === 'out_of_stock');
          expect(stock).toHaveLength(1);
          for (const m of messages(body)) {
            expectUcp('message', m);
            expect(typeof m.content).toBe('string');
            expect(m.content.length).toBeGreaterThan(0);
          }
          expect(stock[0]).toMatchObject({
            type: 'error',
            path: expect.stringMatching(/^\$\.line_items\[\d+\]$/),
          });
          expect(stock[0]?.content).toContain(FIXTURE.outOfStock);
        }
      });

      it('payment_failure: an instrument of another handler is not charged: 200, not completed, payment_failed', async () => {
        const p = await platform();
        const c = await p.ready();
        const r = await p.call('POST', `/checkout-sessions/${c.id}/complete`, {
          payment: {
            instruments: [
              {
                id: 'i1',
                handler_id: 'gpay',
                type: 'card',
                selected: true,
                credential: { type: 'PAYMENT_GATEWAY' },
              },
            ],
          },
        });
        const after = expectCheckout(r);
        expect(after.status).toBe('ready_for_complete');
        expect(messages(after)).toContainEqual(
          expect.objectContaining({ code: 'payment_failed', path: '$.payment.instruments[0].handler_id' }),
        );
      });

      it.each([
        ['no purchase order number', { type: 'purchase_order' }, '.credential.purchase_order_number'],
        [
          'a number with a control character',
          { type: 'purchase_order', purchase_order_number: 'PO\u0007' },
          '.credential.purchase_order_number',
        ],
        ['a credential of another type', { type: 'card', purchase_order_number: 'PO-1' }, '.credential.type'],
      ])(
        'payment_failed at the path the handler schema names: %s (issue 50)',
        async (_name, credential, at) => {
          const p = await platform();
          const c = await p.ready();
          const r = await p.call('POST', `/checkout-sessions/${c.id}/complete`, {
            payment: {
              instruments: [
                {
                  id: 'po_1',
                  handler_id: 'purchase_order',
                  type: 'purchase_order',
                  selected: true,
                  credential,
                },
              ],
            },
          });
          const after = expectCheckout(r);
          expect(after.status).toBe('ready_for_complete');
          expect(messages(after)).toContainEqual(
            expect.objectContaining({ code: 'payment_failed', path: `$.payment.instruments[0]${at}` }),
          );
        },
      );

      it('complete_without_fulfillment: 200, not completed, a recoverable message into $.fulfillment', async () => {
        const p = await platform();
        const c = await p.create();
        expect(c.status).toBe('incomplete');
        const after = expectCheckout(await p.complete(c.id));
        expect(after.status).toBe('incomplete');
        expect(
          messages(after).some((m) => m.path?.startsWith('$.fulfillment') && m.severity === 'recoverable'),
        ).toBe(true);
      });

      it.each([
        ['no line_items', {}, '$'],
        [
          'quantity 0',
          { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 0 }] },
          '$.line_items[0].quantity',
        ],
        [
          'quantity above the limit',
          { line_items: [{ item: { id: FIXTURE.itemA }, quantity: 10001 }] },
          '$.line_items[0].quantity',
        ],
      ])('refuses a create with %s: 400 at its path', async (_w, body, path) => {
        const p = await platform();
        const r = await p.call('POST', '/checkout-sessions', body);
        expect(r.status).toBe(400);
        expect(String(r.body.path ?? '')).toContain(path === '$' ? '$' : path);
      });

      it('refuses malformed JSON (400) and another media type (415)', async () => {
        const p = await platform();
        expect((await p.call('POST', '/checkout-sessions', '{"line_items": [')).status).toBe(400);
        expect(
          (await p.call('POST', '/checkout-sessions', 'x', { 'content-type': 'text/plain' })).status,
        ).toBe(415);
      });
    });

    describe('approval above the spend policy', () => {
      it('is requires_escalation with a requires_buyer_review message and continue_url; approved, completed', async () => {
        const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
        const c = await p.ready();
        const held = expectCheckout(await p.complete(c.id));
        expect(held.status).toBe('requires_escalation');
        expect(String(held.continue_url)).toMatch(/\/console\/approvals\?order=ord_/);
        expect(messages(held)).toContainEqual(expect.objectContaining({ severity: 'requires_buyer_review' }));
        const orderId = (held.order as { id: string }).id;
        const ok = await sys.gql(APPROVE, {
          token: await sys.token(['orders:approve'], 'ops-ucp'),
          variables: { id: orderId },
        });
        expect(ok.errors).toBeUndefined();
        expect(expectCheckout(await p.call('GET', `/checkout-sessions/${c.id}`)).status).toBe('completed');
      });
    });

    describe('orders (order_test.py)', () => {
      it('order_retrieval and order_fulfillment_retrieval: the order under the REST endpoint, with the address', async () => {
        const p = await platform();
        const c = await p.ready(2);
        const done = expectCheckout(await p.complete(c.id));
        const order = done.order as { id: string; permalink_url: string };
        const r = await p.call('GET', `/orders/${order.id}`);
        expect(r.status).toBe(200);
        expectUcp('order', r.body);
        expect(r.body).toMatchObject({
          id: order.id,
          checkout_id: c.id,
          permalink_url: order.permalink_url,
          currency: 'USD',
        });
        const exp = (
          r.body.fulfillment as {
            expectations: { description: string; destination: Record<string, string> }[];
          }
        ).expectations[0];
        expect(exp?.description).toBe('Delivery under your procurement terms');
        expect(exp?.destination.address_country).toBe('US');
        expect(totalsOf(r.body).total).toBe(totalsOf(done).total);
      });

      it("reads the caller's own orders only: another platform gets 404", async () => {
        const p = await platform();
        const other = await platform();
        const c = await p.ready();
        const order = expectCheckout(await p.complete(c.id)).order as { id: string };
        expect((await other.call('GET', `/orders/${order.id}`)).status).toBe(404);
        expect((await other.call('GET', `/checkout-sessions/${c.id}`)).status).toBe(404);
      });
    });
  });
}
