/**
 * The UCP catalog capabilities over REST (catalog/rest.md) as a platform that knows only the
 * published specification uses them: search, lookup, product detail, each answer valid against
 * the vendored schemas; then the item found is checked out and completed on account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  purchaseOrderPayment,
  startProfileServer,
  UCP_ADDRESS,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import { issueKey } from '../acp/support/acp.ts';
import { classifySpecBlock, type SpecExample, specBlocks, UCP_SPEC_PAGES } from './support/spec-examples.ts';
import { expectUcp } from './support/validate.ts';

const SIZE = 1200;
type Json = Record<string, unknown>;
type Variant = {
  id: string;
  sku: string;
  price: { amount: number; currency: string };
  inputs?: { id: string; match: string }[];
};
type Product = {
  id: string;
  title: string;
  variants: Variant[];
  options?: { name: string; values: Json[] }[];
  selected?: Json[];
};

let sys: TestSystem;
let profiles: ProfileServer;
let profileUrl: string;
let bare: string;
beforeAll(async () => {
  sys = await startEmbedded({
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    CATALOG_SIZE: String(SIZE),
    // Every call here comes from one address: on a slow machine the default bucket (20, 10/s)
    // ran dry mid-file. The rate limit has its own tests.
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '10000',
  });
  profiles = await startProfileServer();
  profileUrl = profiles.set(
    '/platform.json',
    platformProfile({
      capabilities: ['checkout', 'order', 'fulfillment', 'catalog.search', 'catalog.lookup'],
    }),
  );
  bare = profiles.set('/bare.json', platformProfile({ capabilities: ['checkout'] }));
}, 120_000);
afterAll(async () => {
  await profiles?.close();
  await sys?.close();
});

const call = (path: string, body: unknown, o: { key?: string; profile?: string } = {}) =>
  ucpCall(
    sys.url,
    { profileUrl: o.profile ?? profileUrl, ...(o.key ? { key: o.key } : {}) },
    'POST',
    path,
    body,
  );

describe('POST /catalog/search', () => {
  it('finds "ergnomic chair" (sic) under 300 USD, priced for the caller, valid against the release', async () => {
    const r = await call('/catalog/search', {
      query: 'ergnomic chair',
      context: { address_country: 'US', currency: 'USD' },
      filters: { price: { max: 30000 } },
      pagination: { limit: 5 },
    });
    expect(r.status).toBe(200);
    expectUcp('catalog_search_response', r.body);
    const products = r.body.products as Product[];
    expect(products.length).toBeGreaterThan(0);
    for (const p of products) {
      expect(p.title).toMatch(/Chair/);
      for (const v of p.variants) {
        expect(v.price.currency).toBe('USD');
        expect(v.price.amount).toBeLessThanOrEqual(30000);
      }
    }
    expect(r.body.messages).toContainEqual(
      expect.objectContaining({ type: 'info', code: 'query_corrected' }),
    );
    expect(r.body.ucp).toMatchObject({
      capabilities: { 'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }] },
    });
  });

  it("prices a variant as the one-line cart quote does (GET /cart/quote's total)", async () => {
    const r = await call('/catalog/search', { query: 'cordless drill', context: { address_country: 'US' } });
    const v = (r.body.products as Product[])[0]?.variants[0] as Variant;
    const quote = await fetch(`${sys.url}/cart/quote?line=${v.sku}:1&currency=USD&region=US`);
    const q = (await quote.json()) as { total: number };
    expect(v.price.amount).toBe(Math.round(q.total * 100));
  });

  it('pages with its cursor, and refuses a cursor from another search', async () => {
    const first = await call('/catalog/search', {
      filters: { categories: ['Office'] },
      pagination: { limit: 3 },
    });
    const pagination = first.body.pagination as {
      cursor?: string;
      has_next_page: boolean;
      total_count: number;
    };
    expect(pagination.has_next_page).toBe(true);
    expect(pagination.total_count).toBeGreaterThan(3);
    const second = await call('/catalog/search', {
      filters: { categories: ['Office'] },
      pagination: { limit: 3, cursor: pagination.cursor },
    });
    expectUcp('catalog_search_response', second.body);
    const ids = (b: Json) => (b.products as Product[]).map((p) => p.id);
    expect(ids(second.body).some((id) => ids(first.body).includes(id))).toBe(false);
    const foreign = await call('/catalog/search', {
      query: 'drill',
      pagination: { cursor: pagination.cursor },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'invalid_request', path: '$.pagination.cursor' });
  });

  it.each<[string, unknown, number, Json]>([
    [
      'no query and no filter (search.md: implementations MUST validate inputs)',
      {},
      400,
      { code: 'invalid_request' },
    ],
    ['a query of 100 kB (over the body limit)', { query: 'x'.repeat(100_000) }, 413, {}],
    ['a query of 2 kB', { query: 'chair '.repeat(400) }, 400, { code: 'request_too_large', path: '$.query' }],
    [
      'a limit of 0 (the schema: minimum 1)',
      { query: 'x', pagination: { limit: 0 } },
      400,
      { code: 'invalid_request' },
    ],
    [
      'a price filter of -1',
      { query: 'x', filters: { price: { max: -1 } } },
      400,
      { code: 'invalid_request' },
    ],
    ['a query that is a number', { query: 7 }, 400, { code: 'invalid_request', path: '$.query' }],
  ])('refuses %s with a UCP error', async (_what, body, status, expected) => {
    const r = await call('/catalog/search', body);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject(expected);
  });

  it('clamps a limit of 10^9 to its largest page', async () => {
    const r = await call('/catalog/search', {
      filters: { categories: ['Office', 'Tools', 'Home'] },
      pagination: { limit: 1e9 },
    });
    expect(r.status).toBe(200);
    expect((r.body.pagination as { total_count: number }).total_count).toBeGreaterThan(50);
    expect((r.body.products as Product[]).length).toBe(50);
  });

  it('answers capabilities_incompatible to a platform whose profile has no catalog', async () => {
    const r = await call('/catalog/search', { query: 'chair' }, { profile: bare });
    expect(r.status).toBe(200);
    expectUcp('error_response', r.body);
    expect(r.body.messages).toEqual([expect.objectContaining({ code: 'capabilities_incompatible' })]);
  });

  it('refuses a call without UCP-Agent', async () => {
    const r = await ucpCall(sys.url, { profileUrl: null }, 'POST', '/catalog/search', { query: 'chair' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_profile_url' });
  });
});

describe('POST /catalog/lookup', () => {
  const multi = () =>
    generateProducts(SIZE).find((p) => p.variants.length > 2) as ReturnType<typeof generateProducts>[number];

  it('resolves product ids, variant ids and SKUs once each, correlated by inputs, and tells what it did not find', async () => {
    const p = multi();
    const v = p.variants[2] as (typeof p.variants)[number];
    const r = await call('/catalog/lookup', { ids: [p.productId, v.variantId, p.productId, 'prod_nothing'] });
    expect(r.status).toBe(200);
    expectUcp('catalog_lookup_response', r.body);
    const products = r.body.products as Product[];
    expect(products).toHaveLength(1);
    const variants = products[0]?.variants ?? [];
    expect(variants.find((x) => x.sku === p.variants[0]?.sku)?.inputs).toEqual([
      { id: p.productId, match: 'featured' },
    ]);
    expect(variants.find((x) => x.sku === v.sku)?.inputs).toEqual([{ id: v.variantId, match: 'exact' }]);
    expect(variants).toHaveLength(2);
    expect(r.body.messages).toEqual([{ type: 'info', code: 'not_found', content: 'prod_nothing' }]);
  });

  it('refuses more than 50 identifiers with 400 request_too_large (rest.md)', async () => {
    const r = await call('/catalog/lookup', { ids: Array.from({ length: 51 }, (_, i) => `p${i}`) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'request_too_large' });
  });

  it('refuses a lookup without ids (the schema: minItems 1)', async () => {
    const r = await call('/catalog/lookup', { ids: [] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_request' });
  });
});

describe('POST /catalog/product', () => {
  it('narrows the variants to the selection, with availability signals on every option value', async () => {
    const p = generateProducts(SIZE).find(
      (x) => x.options.length === 1 && x.variants.length > 2,
    ) as ReturnType<typeof generateProducts>[number];
    const option = p.options[0] as { name: string; values: readonly string[] };
    const chosen = option.values[1] as string;
    const r = await call('/catalog/product', {
      id: p.productId,
      selected: [{ name: option.name, label: chosen }],
    });
    expect(r.status).toBe(200);
    expectUcp('catalog_get_product_response', r.body);
    const product = r.body.product as Product;
    expect(product.selected).toEqual([{ name: option.name, label: chosen }]);
    expect(product.variants.map((v) => v.sku)).toEqual([p.variants[1]?.sku]);
    expect(product.options?.[0]?.values).toEqual(
      option.values.map((label) => ({ label, available: true, exists: true })),
    );
  });

  it('puts a variant asked for by its id first', async () => {
    const p = generateProducts(SIZE).find((x) => x.variants.length > 2) as ReturnType<
      typeof generateProducts
    >[number];
    const r = await call('/catalog/product', { id: p.variants[2]?.variantId });
    expect((r.body.product as Product).variants[0]?.sku).toBe(p.variants[2]?.sku);
  });

  it('answers an unknown id with ucp.status error and an unrecoverable not_found', async () => {
    const r = await call('/catalog/product', { id: 'prod_invalid' });
    expect(r.status).toBe(200);
    expectUcp('error_response', r.body);
    expect(r.body.messages).toEqual([
      {
        type: 'error',
        code: 'not_found',
        content: 'Product not found: prod_invalid',
        severity: 'unrecoverable',
      },
    ]);
  });
});

describe("the catalog pages' own request examples, replayed", () => {
  /**
   * Each request a catalog page shows (a REST body, or an MCP call's `arguments.catalog`, which is
   * what the MCP tool hands this same REST route: ucp/tools.ts), and the route that answers it.
   */
  const ROUTES = {
    catalog_search_request: ['/catalog/search', 'catalog_search_response'],
    catalog_lookup_request: ['/catalog/lookup', 'catalog_lookup_response'],
    catalog_get_product_request: ['/catalog/product', 'catalog_get_product_response'],
  } as const;
  const requests = UCP_SPEC_PAGES.filter((p) => p.startsWith('catalog/'))
    .flatMap((p) => specBlocks(p).map(classifySpecBlock))
    .filter((e): e is SpecExample => 'def' in e && e.side === 'request' && e.def in ROUTES);

  it('finds the requests of catalog/rest.md and catalog/mcp.md', () => {
    expect(requests.length).toBeGreaterThanOrEqual(7);
  });

  it.each(requests.map((e) => [e.at, e] as const))('%s: answered as the release says', async (_at, e) => {
    const [path, reply] = ROUTES[e.def as keyof typeof ROUTES];
    const r = await call(path, e.value);
    // The pages' products are not this catalog's: a product asked for by id is a not_found
    // business outcome (rest.md), a search or lookup an answer with what matched.
    if (reply === 'catalog_get_product_response' && r.body.ucp && (r.body.ucp as Json).status === 'error') {
      expectUcp('error_response', r.body);
      expect(((r.body.messages as Json[])[0] as Json).code).toBe('not_found');
    } else {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expectUcp(reply, r.body);
    }
  });
});

describe('an agent with a spend policy', () => {
  it('sees which items its budget does not cover, and which would wait for approval', async () => {
    const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-catalog-${process.pid}`;
    const set = await sys.gql(
      'mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }',
      {
        token: await sys.token(['spend:admin']),
        variables: {
          input: {
            subject: spiffeId,
            currency: 'USD',
            period: 'DAY',
            budget: '300.00',
            approvalAbove: '100.00',
          },
        },
      },
    );
    expect(set.errors).toBeUndefined();
    const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
    const r = await call(
      '/catalog/search',
      { query: 'office chair', context: { currency: 'USD' }, pagination: { limit: 50 } },
      { key },
    );
    expectUcp('catalog_search_response', r.body);
    const messages = (r.body.messages ?? []) as { code: string; path: string }[];
    const products = r.body.products as Product[];
    const at = (path: string) => {
      const m = /\$\.products\[(\d+)\]\.variants\[(\d+)\]/.exec(path);
      return products[Number(m?.[1])]?.variants[Number(m?.[2])] as Variant;
    };
    const over = messages.filter((m) => m.code === 'over_budget');
    const approval = messages.filter((m) => m.code === 'approval_required');
    expect(over.length).toBeGreaterThan(0);
    expect(approval.length).toBeGreaterThan(0);
    for (const m of over) expect(at(m.path).price.amount).toBeGreaterThan(30000);
    for (const m of approval) expect(at(m.path).price.amount).toBeGreaterThan(10000);
  });
});

describe('found, then bought', () => {
  it('searches, looks up, checks out the item found and completes it on account', async () => {
    const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-finder-${process.pid}`;
    const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
    const found = await call('/catalog/search', { query: 'yoga mat', filters: { available: true } }, { key });
    const variant = (found.body.products as Product[])[0]?.variants[0] as Variant;
    const looked = await call('/catalog/lookup', { ids: [variant.id] }, { key });
    expect((looked.body.products as Product[])[0]?.variants[0]?.id).toBe(variant.id);
    const checkout = (method: 'POST' | 'PUT', path: string, body: unknown) =>
      ucpCall(sys.url, { profileUrl, key }, method, path, body);
    const created = await checkout('POST', '/checkout-sessions', {
      line_items: [{ item: { id: variant.id }, quantity: 1 }],
      fulfillment: { methods: [{ type: 'shipping', destinations: [UCP_ADDRESS] }] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((created.body.line_items as { item: { price: number } }[])[0]?.item.price).toBe(
      variant.price.amount,
    );
    const ready = await checkout('PUT', `/checkout-sessions/${id}`, {
      line_items: [{ item: { id: variant.id }, quantity: 1 }],
      fulfillment: {
        methods: [
          {
            line_item_ids: ['li_0'],
            groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
          },
        ],
      },
    });
    expect(ready.body.status).toBe('ready_for_complete');
    const done = await checkout('POST', `/checkout-sessions/${id}/complete`, {
      payment: purchaseOrderPayment('PO-FOUND-1'),
    });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('completed');
  });
});

describe("a merchant's own feed", () => {
  /** Imports feed lines (PARTIAL) through the GraphQL mutations, as the console and the CLI do. */
  async function importFeed(lines: string[]) {
    const token = await sys.token(['catalog:admin']);
    const start = await sys.gql(
      'mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }',
      {
        token,
        variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_ucp', target_country: 'US' } } },
      },
    );
    const id = (start.data?.startCatalogImport as { id: string } | undefined)?.id;
    const append = await sys.gql(
      'mutation($id: ID!, $lines: [String!]!) { appendCatalogImport(id: $id, firstLine: 1, lines: $lines) { accepted refused } }',
      { token, variables: { id, lines } },
    );
    expect(append.data?.appendCatalogImport).toEqual({ accepted: lines.length, refused: 0 });
    await sys.gql('mutation($id: ID!) { commitCatalogImport(id: $id) { id } }', { token, variables: { id } });
    for (let i = 0; i < 200; i++) {
      const r = await sys.gql('query($id: ID!) { catalogImport(id: $id) { status } }', {
        token,
        variables: { id },
      });
      if ((r.data?.catalogImport as { status: string } | undefined)?.status === 'DONE') return;
      await new Promise((ok) => setTimeout(ok, 25));
    }
    throw new Error('the import did not finish');
  }

  it('is searched, looked up by its own variant ids, and checked out by them: the order carries the SKU', async () => {
    await importFeed([
      JSON.stringify({
        id: 'lamp-aurora',
        title: 'Aurora Arc Floor Lamp',
        description: { plain: 'An arc floor lamp with a marble base.' },
        variants: [
          {
            id: 'lamp-aurora-brass',
            title: 'Aurora Arc Floor Lamp - Brass',
            price: { amount: 18900, currency: 'USD' },
            availability: { available: true, status: 'in_stock' },
            categories: [{ value: 'Home > Lighting', taxonomy: 'merchant' }],
            variant_options: [{ name: 'Finish', value: 'Brass' }],
          },
        ],
      }),
    ]);
    const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/ucp-feed-${process.pid}`;
    const { key } = await issueKey(sys, { spiffeId, ucpProfile: profiles.origin });
    const found = await call('/catalog/search', { query: 'arc floor lamp' }, { key });
    expectUcp('catalog_search_response', found.body);
    const variant = (found.body.products as Product[])[0]?.variants[0] as Variant;
    expect(variant.id).toBe('lamp-aurora-brass');
    expect(variant.sku).toMatch(/^SKU-HOM-\d{6}$/);
    const created = await ucpCall(sys.url, { profileUrl, key }, 'POST', '/checkout-sessions', {
      line_items: [{ item: { id: 'lamp-aurora-brass' }, quantity: 2 }],
    });
    expect(created.status).toBe(201);
    const line = (created.body.line_items as { item: { id: string; price: number } }[])[0];
    expect(line).toMatchObject({ item: { id: 'lamp-aurora-brass', price: 18900 } });
  });
});
