/**
 * What the UCP checkout suite's parts share (../checkout.suite.ts): the fixture, the promotion
 * rules it upserts, and the context each part reads once the suite's beforeAll has run: the
 * system, the platform profile server, and `platform()`, a platform of its own per call.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  totalsOf,
  UCP_ADDRESS,
  type UcpReply,
  ucpCall,
} from '../../../harness/ucp-platform.ts';
import type { Gql } from '../../acp/support/acp.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { expectUcp } from '../support/validate.ts';

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
export const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';
export const APPROVE = 'mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { orderId status } }';
const UPSERT = 'mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId } }';

export type Checkout = Record<string, unknown> & { id: string; status: string };

/** A checkout answer: the status, and a body valid against checkout with both extensions. */
export function expectCheckout(r: UcpReply, status = 200): Checkout {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  expectUcp('checkout_with_discount_and_fulfillment', r.body);
  expect(r.body.currency).toBe('USD');
  return r.body as Checkout;
}

export const priceOf = (c: Checkout, i = 0) =>
  (c.line_items as { item: { price: number } }[])[i]?.item.price as number;
export const lineTotals = (c: Checkout, i = 0) =>
  totalsOf((c.line_items as { totals: unknown }[])[i] as { totals: unknown });
export const messages = (c: Record<string, unknown>) =>
  (c.messages ?? []) as { type: string; code?: string; path?: string; severity?: string; content: string }[];

/** The suite's state, filled by its beforeAll: the parts read it inside their tests. */
export interface CheckoutContext {
  readonly label: string;
  readonly sys: UcpSystem;
  readonly profiles: ProfileServer;
  readonly profileUrl: string;
  /** Item A's units in stock (the generated catalog's 50): above it a line is out of stock. */
  readonly stockOfA: number;
  /** A gateway replica's base URL: consecutive calls go to different replicas. */
  url(): string;
  /** A platform of its own: its agent identity, key, budget, block and bucket. */
  platform(policy?: Record<string, string>): Promise<Platform>;
}

/** Registers the suite's beforeAll (system, profile, the fixture's stock, the rules) and afterAll. */
export function checkoutContext(label: string, start: () => Promise<UcpSystem>): CheckoutContext {
  let step = 0;
  let platforms = 0;
  const t = {
    label,
    sys: undefined as unknown as UcpSystem,
    profiles: undefined as unknown as ProfileServer,
    profileUrl: '',
    stockOfA: 0,
    url: () => t.sys.urls[step++ % t.sys.urls.length] as string,
    platform: (policy?: Record<string, string>) => platformOf(t, ++platforms, policy),
  };
  beforeAll(async () => {
    t.sys = await start();
    t.profiles = await startProfileServer();
    t.profileUrl = t.profiles.set('/platform.json', platformProfile());
    t.stockOfA = await fixtureStock(t.sys);
    const admin = await t.sys.token(['promotions:admin']);
    for (const rule of RULES) {
      const r = await t.sys.gql(UPSERT, { token: admin, variables: { rule } });
      expect(r.errors).toBeUndefined();
    }
  }, 240_000);
  afterAll(async () => {
    await t.profiles?.close();
    await t.sys?.close();
  });
  return t;
}

/**
 * The fixture's stock roles, read from the catalog: none of the out-of-stock item, and item A's
 * stock under the merchant's quantity limit (999), so a PUT over it is a stock question, not a
 * 400. Resolves with item A's stock.
 */
async function fixtureStock(sys: UcpSystem): Promise<number> {
  const stock = await sys.gql(STOCK, { variables: { skus: [FIXTURE.itemA, FIXTURE.outOfStock] } });
  expect(stock.errors).toBeUndefined();
  const [a, none] = (stock.data as { products: { inventoryLevel: number }[] }).products;
  expect(none?.inventoryLevel).toBe(0);
  const stockOfA = a?.inventoryLevel ?? 0;
  expect(stockOfA).toBeGreaterThan(2);
  expect(stockOfA).toBeLessThan(999);
  return stockOfA;
}

export type Platform = Awaited<ReturnType<typeof platformOf>>;

/** The `n`th platform of the suite. */
async function platformOf(t: CheckoutContext, n: number, policy?: Record<string, string>) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-${t.label}-${n}`;
  if (policy) {
    const r = await t.sys.gql(SET, {
      token: await t.sys.token(['spend:admin']),
      variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
    });
    expect(r.errors).toBeUndefined();
  }
  const { key } = await issueKey(t.sys, {
    spiffeId,
    agentId: `agent-ucp-${t.label}-${n}-${process.pid}`,
    ucpProfile: t.profiles.origin,
  });
  const call = (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    headers?: Record<string, string | null>,
  ) => ucpCall(t.url(), { key, profileUrl: t.profileUrl }, method, path, body, headers);
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
  const completeBody = (po = 'PO-UCP-1') => ({ payment: purchaseOrderPayment(po) });
  const complete = (id: string, po?: string, headers?: Record<string, string | null>) =>
    call('POST', `/checkout-sessions/${id}/complete`, completeBody(po), headers);
  const cancel = (id: string, headers?: Record<string, string | null>) =>
    call('POST', `/checkout-sessions/${id}/cancel`, undefined, headers);
  return { spiffeId, key, call, create, update, ready, complete, completeBody, cancel };
}
