/**
 * What the UCP cart test's parts share (../ucp.test.ts): the items, the request shapes, the
 * answer checks, and the context its beforeAll fills: the system, the profiles, a platform of its
 * own per call, GET /cart/quote's totals, the carts stored, a feed import.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  type UcpReply,
  ucpCall,
} from '../../../harness/ucp-platform.ts';
import { issueKey } from '../../acp/support/acp.ts';
import { expectUcp } from '../../ucp/support/validate.ts';

export const A = 'SKU-ABC-000001';
export const B = 'SKU-ELC-000004';
const SET = 'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }';

export type Cart = Record<string, unknown> & { id: string };

/** A cart answer: the status, and a body valid against the vendored cart.json. */
export function expectCart(r: UcpReply, status = 200): Cart {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  expectUcp('cart', r.body);
  expect(r.body.currency).toBe('USD');
  return r.body as Cart;
}

/** A protocol error: the status and `{code, content}`. */
export function expectError(r: UcpReply, status: number, code: string, path?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, content: expect.any(String) });
  expect(r.body.path).toBe(path);
}

export const lines = (...items: [string, number][]) => ({
  line_items: items.map(([id, quantity]) => ({ item: { id }, quantity })),
});

export const completeBody = {
  payment: purchaseOrderPayment('PO-CART-1'),
};

/** The test's state, filled by its beforeAll: the parts read it inside their tests. */
export interface CartContext {
  readonly sys: TestSystem;
  readonly profiles: ProfileServer;
  /** A profile with the cart capability, and one without it. */
  readonly profileUrl: string;
  readonly bareUrl: string;
  /** A platform of its own (its identity, agent id, key, budget and block). */
  platform(policy?: Record<string, string>): Promise<Platform>;
  /** GET /cart/quote's totals for the same items, in cents, as `customerId`. */
  quoteOf(items: { id: string; quantity: number }[], customerId: string): Promise<Totals>;
  /** How many carts are stored. */
  stored(): Promise<number>;
  /** One feed product with variant `id` (189.00 USD), imported as the console does. */
  importFeed(id: string): Promise<void>;
}

interface Totals {
  subtotal: number;
  total: number;
}

export type Platform = Awaited<ReturnType<typeof platformOf>>;

/** Registers the test's beforeAll (system, profiles) and afterAll. */
export function cartContext(): CartContext {
  let platforms = 0;
  const t: CartContext = {
    sys: undefined as unknown as TestSystem,
    profiles: undefined as unknown as ProfileServer,
    profileUrl: '',
    bareUrl: '',
    platform: (policy) => platformOf(t, ++platforms, policy),
    quoteOf: (items, customerId) => quoteOf(t.sys, items, customerId),
    stored: async () =>
      Number((await t.sys.platform.db.query<{ n: string }>('SELECT count(*) AS n FROM carts'))[0]?.n),
    importFeed: (id) => importFeed(t.sys, id),
  };
  const state = t as { -readonly [K in keyof CartContext]: CartContext[K] };
  beforeAll(async () => {
    state.sys = await startEmbedded({
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      RATE_LIMIT_CAPACITY: '100000',
      RATE_LIMIT_REFILL_PER_SECOND: '100000',
    });
    state.profiles = await startProfileServer();
    state.profileUrl = state.profiles.set(
      '/platform.json',
      platformProfile({ capabilities: ['checkout', 'order', 'cart'] }),
    );
    state.bareUrl = state.profiles.set(
      '/bare.json',
      platformProfile({ capabilities: ['checkout', 'order'] }),
    );
  }, 240_000);
  afterAll(async () => {
    await t.profiles?.close();
    await t.sys?.close();
  });
  return t;
}

/** The `n`th platform of the test. */
async function platformOf(t: CartContext, n: number, policy?: Record<string, string>) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-cart-${n}`;
  const agentId = `agent-ucp-cart-${n}-${process.pid}`;
  if (policy) {
    const r = await t.sys.gql(SET, {
      token: await t.sys.token(['spend:admin']),
      variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
    });
    expect(r.errors).toBeUndefined();
  }
  const { key } = await issueKey(t.sys, { spiffeId, agentId, ucpProfile: t.profiles.origin });
  const call = (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    headers?: Record<string, string | null>,
  ) => ucpCall(t.sys.url, { key, profileUrl: t.profileUrl }, method, path, body, headers);
  return { key, agentId, call };
}

async function quoteOf(
  sys: TestSystem,
  items: { id: string; quantity: number }[],
  customerId: string,
): Promise<Totals> {
  const q = new URLSearchParams([
    ['currency', 'USD'],
    ['region', 'US'],
    ['customerId', customerId],
  ]);
  for (const it of items) q.append('line', `${it.id}:${it.quantity}`);
  const quote = (await (await fetch(`${sys.url}/cart/quote?${q}`)).json()) as Totals;
  return { subtotal: Math.round(quote.subtotal * 100), total: Math.round(quote.total * 100) };
}

async function importFeed(sys: TestSystem, id: string): Promise<void> {
  const token = await sys.token(['catalog:admin']);
  const start = await sys.gql(
    'mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }',
    {
      token,
      variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_cart', target_country: 'US' } } },
    },
  );
  const job = (start.data?.startCatalogImport as { id: string } | undefined)?.id;
  const line = JSON.stringify({
    id: 'cart-lamp',
    title: 'Cart Arc Floor Lamp',
    description: { plain: 'An arc floor lamp with a marble base.' },
    variants: [
      {
        id,
        title: 'Cart Arc Floor Lamp - Brass',
        price: { amount: 18900, currency: 'USD' },
        availability: { available: true, status: 'in_stock' },
        categories: [{ value: 'Home > Lighting', taxonomy: 'merchant' }],
      },
    ],
  });
  const append = await sys.gql(
    'mutation($id: ID!, $lines: [String!]!) { appendCatalogImport(id: $id, firstLine: 1, lines: $lines) { accepted refused } }',
    { token, variables: { id: job, lines: [line] } },
  );
  expect(append.data?.appendCatalogImport).toEqual({ accepted: 1, refused: 0 });
  await sys.gql('mutation($id: ID!) { commitCatalogImport(id: $id) { id } }', {
    token,
    variables: { id: job },
  });
  for (let i = 0; i < 200; i++) {
    const r = await sys.gql('query($id: ID!) { catalogImport(id: $id) { status } }', {
      token,
      variables: { id: job },
    });
    if ((r.data?.catalogImport as { status: string } | undefined)?.status === 'DONE') return;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error('the import did not finish');
}
