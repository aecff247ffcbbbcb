/**
 * The catalog over GraphQL, through the gateway (schemas/pricing.graphql): a storefront's search
 * page in one query, federated (prices and quotes from pricing, promotions from the promotions
 * subgraph), and its refusals as BAD_USER_INPUT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';

const SEARCH_PAGE = `query Search($input: ProductSearchInput!, $first: Int, $after: String, $ctx: ProductQuoteInput!) {
  searchProducts(input: $input, first: $first, after: $after) {
    totalCount correctedQuery
    pageInfo { hasNextPage endCursor }
    facets { brands { value count } options { name values { value count } } availability { available unavailable } }
    edges { cursor }
    nodes {
      id title brand categories descriptionPlain media { url altText }
      priceRange(currency: "USD") { minDecimal maxDecimal }
      variants {
        sku variantId title available availability options { name value } barcodes { type value }
        quote(input: $ctx) { lines { sku unitPriceDecimal } promotions { totalDecimal discountTotalDecimal } }
      }
    }
  }
}`;

type Node = {
  id: string;
  title: string;
  variants: {
    sku: string;
    quote: { lines: { unitPriceDecimal: string }[]; promotions: { totalDecimal: string } };
  }[];
};
type Page = {
  totalCount: number;
  correctedQuery: string | null;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  facets: { brands: { value: string; count: number }[] };
  nodes: Node[];
};

const SIZE = 1200;
let sys: TestSystem;
beforeAll(async () => {
  sys = await startEmbedded({ CATALOG_SIZE: String(SIZE) });
});
afterAll(() => sys?.close());

const search = async (input: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const res = await sys.gql(SEARCH_PAGE, {
    variables: { input, ctx: { currency: 'USD', region: 'EU' }, first: 5, ...extra },
  });
  return { res, page: res.data?.searchProducts as Page | undefined };
};

describe('searchProducts', () => {
  it('finds "ergnomic chair" (sic) under 300 USD in one query: products, variants, quotes with promotions, facets', async () => {
    const { res, page } = await search({
      query: 'ergnomic chair',
      price: { currency: 'USD', maxDecimal: '300' },
    });
    expect(res.errors).toBeUndefined();
    expect(page?.correctedQuery).toBe('ergonomic chair');
    expect(page?.nodes.length).toBeGreaterThan(0);
    expect(page?.facets.brands.reduce((n, b) => n + b.count, 0)).toBe(page?.totalCount);
    const generated = new Map(generateProducts(SIZE).flatMap((p) => p.variants.map((v) => [v.sku, v])));
    for (const node of page?.nodes ?? []) {
      expect(node.title).toMatch(/Chair/);
      for (const v of node.variants) {
        expect(Number(generated.get(v.sku)?.prices.USD)).toBeLessThanOrEqual(300);
        // The quote is a one-line cart quote: pricing's unit price, promotions' total over it.
        expect(v.quote.lines).toHaveLength(1);
        expect(Number(v.quote.promotions.totalDecimal)).toBeLessThanOrEqual(
          Number(v.quote.lines[0]?.unitPriceDecimal),
        );
      }
    }
  });

  it('quotes a variant exactly as cartQuote quotes the same one-line cart', async () => {
    const { page } = await search({ query: 'drill' });
    const sku = page?.nodes[0]?.variants[0]?.sku;
    const cart = await sys.gql(
      `query($in: CartQuoteInput!) { cartQuote(input: $in) { lines { unitPriceDecimal } promotions { totalDecimal discountTotalDecimal } } }`,
      { variables: { in: { lines: [{ sku, quantity: 1 }], currency: 'USD', region: 'EU' } } },
    );
    const quoted = page?.nodes[0]?.variants[0]?.quote;
    expect(cart.data?.cartQuote).toEqual({
      lines: quoted?.lines.map((l) => ({ unitPriceDecimal: l.unitPriceDecimal })),
      promotions: quoted?.promotions,
    });
  });

  it('pages with endCursor until the last page, every product once', async () => {
    const seen = new Set<string>();
    let after: string | null | undefined;
    let total = 0;
    for (let n = 0; n < 50; n++) {
      const { page } = await search({ categories: ['Office > Chairs'] }, { after, first: 7 });
      total = page?.totalCount ?? 0;
      for (const node of page?.nodes ?? []) {
        expect(seen.has(node.id)).toBe(false);
        seen.add(node.id);
      }
      after = page?.pageInfo.endCursor;
      if (!page?.pageInfo.hasNextPage) break;
    }
    expect(seen.size).toBe(total);
    expect(total).toBeGreaterThan(7);
  });

  it("reads a product's variants when the query selects them, through a fragment too, the rest alike", async () => {
    const input = { query: 'office chair' };
    const bare = await sys.gql(
      'query($input: ProductSearchInput!) { searchProducts(input: $input) { totalCount nodes { id title } } }',
      { variables: { input } },
    );
    const withVariants = await sys.gql(
      `query($input: ProductSearchInput!) { searchProducts(input: $input) { totalCount nodes { ...P } } }
       fragment P on CatalogProduct { id title variants { sku } }`,
      { variables: { input } },
    );
    const full = withVariants.data?.searchProducts as { totalCount: number; nodes: (Node & object)[] };
    expect(full.nodes.length).toBeGreaterThan(0);
    for (const node of full.nodes) expect(node.variants.length).toBeGreaterThan(0);
    expect(bare.data?.searchProducts).toEqual({
      totalCount: full.totalCount,
      nodes: full.nodes.map(({ variants: _, ...rest }) => rest),
    });
  });

  it.each([
    ['no query and no filter', {}, {}, '/input'],
    ['a query of 100 kB', { query: 'x'.repeat(100_000) }, {}, '/input/query'],
    [
      'a price with more decimals than USD has',
      { price: { currency: 'USD', maxDecimal: '1.001' } },
      {},
      '/input/price/maxDecimal',
    ],
    ['first: 0', { query: 'chair' }, { first: 0 }, '/limit'],
    ['a forged cursor', { query: 'chair' }, { after: 'eyJ9.AAAA' }, '/after'],
  ])('refuses %s with BAD_USER_INPUT and a pointer', async (_what, input, extra, pointer) => {
    const { res } = await search(input, extra);
    expect(res.status).toBe(200);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const errors = (res.errors?.[0]?.extensions as { errors?: { pointer: string }[] } | undefined)?.errors;
    expect(errors?.[0]?.pointer).toBe(pointer);
  });
});

describe('catalogProduct', () => {
  it('finds a product by its id, by a variant id and by a SKU, with its variants', async () => {
    const generated = generateProducts(SIZE).find((p) => p.variants.length > 1);
    const q = `query($id: ID!) { catalogProduct(id: $id) { id title variants { sku title } } }`;
    for (const id of [generated?.productId, generated?.variants[1]?.variantId, generated?.variants[0]?.sku]) {
      const res = await sys.gql(q, { variables: { id } });
      expect(res.data?.catalogProduct).toEqual({
        id: generated?.productId,
        title: generated?.title,
        variants: generated?.variants.map((v) => ({ sku: v.sku, title: v.title })),
      });
    }
    expect((await sys.gql(q, { variables: { id: 'no-such-product' } })).data?.catalogProduct).toBeNull();
  });

  it("answers a SKU's variant fields through product(sku)", async () => {
    const generated = generateProducts(SIZE).find((p) => p.variants.length > 1);
    const v = generated?.variants[1];
    const res = await sys.gql(
      `query($sku: ID!) { product(sku: $sku) { sku name variantId title options { name value } catalogProduct { id } } }`,
      { variables: { sku: v?.sku } },
    );
    expect(res.data?.product).toEqual({
      sku: v?.sku,
      name: v?.name,
      variantId: v?.variantId,
      title: v?.title,
      options: v?.options,
      catalogProduct: { id: generated?.productId },
    });
  });
});
