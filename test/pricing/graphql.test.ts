import { execute, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { requestContext } from '../../lib/auth/context.ts';
import type { PricingModule } from '../../subgraphs/pricing/index.ts';

const skus = [
  'SKU-ABC-000001',
  'SKU-ABC-000002',
  ...Array.from(
    { length: 18 },
    (_, i) => `SKU-${['ELC', 'TOY', 'TOL'][i % 3]}-${String(i + 1).padStart(6, '0')}`,
  ),
];

describe('pricing through GraphQL', () => {
  let sys: TestSystem;
  let pricing: PricingModule;
  beforeAll(async () => {
    sys = await startEmbedded();
    pricing = sys.local.pricing as PricingModule;
  });
  afterAll(() => sys?.close());

  const counters = () => ({ ...pricing.api.counters });
  /** The pricing subgraph itself (the edge wraps the gateway's cartQuote with its fallback). */
  const subgraph = async (query: string) => {
    const r = await execute({
      schema: pricing.schema,
      document: parse(query),
      contextValue: requestContext(),
    });
    return { data: r.data as Record<string, unknown> | null | undefined, errors: r.errors };
  };
  const post = async (body: Record<string, unknown>) => {
    const res = await fetch(`${sys.url}/v1/prices/calculate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { cache: res.headers.get('x-cache'), body: (await res.json()) as Record<string, unknown> };
  };

  it('prices 20 products with one cache read, one cache write and one catalog query per loader', async () => {
    const query = `query($skus: [ID!]!) { products(skus: $skus) { sku category
      price(context: { currency: "USD", region: "gql-batch", customerSegment: "VIP", inventoryLevel: 7 }) {
        dynamicPrice appliedModifiers currency } } }`;
    const before = counters();
    const res = await sys.gql(query, { variables: { skus } });
    expect(res.errors).toBeUndefined();
    const products = res.data?.products as { sku: string; price: { appliedModifiers: string[] } }[];
    expect(products.map((p) => p.sku)).toEqual(skus);
    for (const p of products)
      expect(p.price.appliedModifiers).toEqual(['SCARCITY_SURCHARGE_15', 'VIP_SEGMENT_DISCOUNT']);
    const after = counters();
    // products (1) + base prices of the 20 (1)
    expect(after.catalogReads - before.catalogReads).toBe(2);
    expect(after.cacheRoundTrips - before.cacheRoundTrips).toBe(2);
    expect(after.misses - before.misses).toBe(20);

    const again = await sys.gql(query, { variables: { skus } });
    expect(again.data).toEqual(res.data);
    const third = counters();
    expect(third.catalogReads - after.catalogReads).toBe(1);
    expect(third.cacheRoundTrips - after.cacheRoundTrips).toBe(1);
    expect(third.hits - after.hits).toBe(20);
  });

  it('resolves 20 product entities (the federated join) with one catalog query', async () => {
    const before = counters();
    const result = await execute({
      schema: pricing.schema,
      document: parse(
        `query($r: [_Any!]!) { _entities(representations: $r) { ... on Product { sku name inventoryLevel } } }`,
      ),
      variableValues: { r: [...skus, 'SKU-ZZZ-000001'].map((sku) => ({ __typename: 'Product', sku })) },
      contextValue: requestContext(),
    });
    expect(result.errors).toBeUndefined();
    const entities = result.data?._entities as ({ sku: string } | null)[];
    expect(entities.slice(0, 20).map((e) => e?.sku)).toEqual(skus);
    expect(entities[20]).toBeNull();
    expect(counters().catalogReads - before.catalogReads).toBe(1);
  });

  it('answers Query.price like the REST route, sharing its cache', async () => {
    const context = {
      sku: 'SKU-ABC-000001',
      currency: 'USD',
      region: 'gql-rest',
      customerSegment: 'STANDARD',
      inventoryLevel: 600,
    };
    const res = await sys.gql(
      'query($c: PriceContextInput!) { price(context: $c) { sku basePrice dynamicPrice currency appliedModifiers calculatedAt } }',
      { variables: { c: context } },
    );
    expect(res.errors).toBeUndefined();
    const rest = await post(context);
    expect(rest.cache).toBe('HIT');
    expect(rest.body).toEqual(res.data?.price);
    expect(rest.body).toMatchObject({ dynamicPrice: 17.99, appliedModifiers: ['OVERSTOCK_DISCOUNT_10'] });
  });

  it('prices a cart (pricing subgraph) in its own currency, not with a EUR price stored under the same key', async () => {
    const key = { sku: 'SKU-ABC-000001', region: 'gql-currency', customerSegment: 'STANDARD' };
    expect((await post({ ...key, currency: 'EUR', inventoryLevel: 50 })).body.currency).toBe('EUR');
    const res = await subgraph(
      `{ cartQuote(input: { lines: [{ sku: "SKU-ABC-000001", quantity: 3 }, { sku: "SKU-ABC-000002", quantity: 2 }],
          currency: "USD", region: "gql-currency", customerSegment: "STANDARD" }) {
        id currency subtotal lines { sku name category quantity basePrice unitPrice lineTotal appliedModifiers source } } }`,
    );
    expect(res.errors).toBeUndefined();
    const quote = res.data?.cartQuote as { subtotal: number; lines: Record<string, unknown>[]; id: string };
    expect(quote.lines).toEqual([
      {
        sku: 'SKU-ABC-000001',
        name: 'Widget',
        category: 'tools',
        quantity: 3,
        basePrice: 19.99,
        unitPrice: 19.99,
        lineTotal: 59.97,
        appliedModifiers: [],
        source: 'LIVE',
      },
      // Gadget has 5 units in stock: scarce.
      {
        sku: 'SKU-ABC-000002',
        name: 'Gadget',
        category: 'toys',
        quantity: 2,
        basePrice: 5,
        unitPrice: 5.75,
        lineTotal: 11.5,
        appliedModifiers: ['SCARCITY_SURCHARGE_15'],
        source: 'LIVE',
      },
    ]);
    expect(quote.subtotal).toBe(71.47);
    const again = await subgraph(
      `{ cartQuote(input: { lines: [{ sku: "SKU-ABC-000002", quantity: 2 }, { sku: "SKU-ABC-000001", quantity: 3 }],
          currency: "USD", region: "gql-currency", customerSegment: "STANDARD" }) { id lines { source } } }`,
    );
    const q2 = again.data?.cartQuote as { id: string; lines: { source: string }[] };
    expect(q2.id).toBe(quote.id);
    expect(q2.lines.map((l) => l.source)).toEqual(['CACHE', 'CACHE']);
  });

  it.each([
    ['an unknown SKU', '[{ sku: "SKU-ZZZ-000001", quantity: 1 }]', 'NOT_FOUND'],
    ['a quantity of 0', '[{ sku: "SKU-ABC-000001", quantity: 0 }]', 'BAD_USER_INPUT'],
  ])('refuses a cart quote with %s (pricing subgraph)', async (_label, lines, code) => {
    const res = await subgraph(
      `{ cartQuote(input: { lines: ${lines}, currency: "USD", region: "x" }) { id } }`,
    );
    expect(res.errors?.[0]?.extensions?.code).toBe(code);
  });

  describe('setBasePrice (role pricing:admin)', () => {
    const mutation = `mutation($i: SetBasePriceInput!) { setBasePrice(input: $i) { sku currency amount } }`;
    const context = {
      sku: 'SKU-TOY-000003',
      currency: 'USD',
      region: 'gql-admin',
      customerSegment: 'X',
      inventoryLevel: 50,
    };

    it('is refused without the role, and changes nothing', async () => {
      const cached = await post(context);
      const token = await sys.token(['pricing:read']);
      const res = await sys.gql(mutation, {
        token,
        variables: { i: { sku: context.sku, currency: 'USD', amount: 1 } },
      });
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      const after = await post(context);
      expect(after.cache).toBe('HIT');
      expect(after.body.basePrice).toBe(cached.body.basePrice);
    });

    it('changes the base price with the role; the next request is a MISS at the new price', async () => {
      expect((await post(context)).cache).toBe('HIT');
      const token = await sys.token(['pricing:admin']);
      const res = await sys.gql(mutation, {
        token,
        variables: { i: { sku: context.sku, currency: 'USD', amount: 42.5 } },
      });
      expect(res.errors).toBeUndefined();
      expect(res.data?.setBasePrice).toEqual({ sku: context.sku, currency: 'USD', amount: 42.5 });
      const next = await post(context);
      expect(next.cache).toBe('MISS');
      expect(next.body).toMatchObject({ basePrice: 42.5, dynamicPrice: 42.5 });
      const catalog = await sys.gql(`{ product(sku: "${context.sku}") { basePrices { currency amount } } }`);
      expect(catalog.data?.product).toMatchObject({
        basePrices: expect.arrayContaining([{ currency: 'USD', amount: 42.5 }]),
      });
    });

    it.each([
      [{ sku: 'SKU-ZZZ-000001', currency: 'USD', amount: 3 }, 'NOT_FOUND'],
      [{ sku: 'SKU-TOY-000003', currency: 'USD', amount: -3 }, 'BAD_USER_INPUT'],
      [{ sku: 'SKU-TOY-000003', currency: 'US', amount: 3 }, 'BAD_USER_INPUT'],
      [{ sku: 'SKU-TOY-000003', currency: 'USD', amount: 3.333 }, 'BAD_USER_INPUT'],
    ])('refuses %j with %s', async (input, code) => {
      const token = await sys.token(['pricing:admin']);
      const res = await sys.gql(mutation, { token, variables: { i: input } });
      expect(res.errors?.[0]?.extensions?.code).toBe(code);
    });
  });
});
