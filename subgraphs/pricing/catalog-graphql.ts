/**
 * The catalog's GraphQL edge (schemas/pricing.graphql: searchProducts, catalogProduct, the
 * variant fields of Product): parses, calls the catalog products port, renders. A storefront's
 * search page is one query: the page of products, their variants, each variant's quote (a
 * one-line cart quote, so the promotions subgraph adds its promotions as for any cart) and the
 * facets.
 */
import DataLoader from 'dataloader';
import { GraphQLError, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';
import { exactAmount, minorUnits } from '../../lib/graphql/decimal.ts';
import { money } from '../../lib/money.ts';
import type { CatalogProduct, CatalogVariant, Media } from './catalog/model.ts';
import type { CatalogProducts } from './catalog/products.ts';
import { type SearchInput, SearchInputError, searchRequest } from './catalog/search/request.ts';
import type { SearchFacets } from './catalog/search/sql.ts';

/** A variant as the Product type resolves it: the SKU-level product plus its variant fields. */
type VariantOf = CatalogVariant & { productId: string };

interface SearchArgs {
  input: {
    query?: string | null;
    categories?: string[] | null;
    brands?: string[] | null;
    price?: { currency: string; minDecimal?: unknown; maxDecimal?: unknown } | null;
    availableOnly?: boolean | null;
    options?: { name: string; values: string[] }[] | null;
    conditions?: string[] | null;
  };
  first?: number | null;
  after?: string | null;
}

const badInput = (err: SearchInputError, at: string) =>
  new GraphQLError(`${at}${err.pointer} ${err.message}`, {
    extensions: {
      code: 'BAD_USER_INPUT',
      errors: [{ pointer: `${at}${err.pointer}`, message: err.message }],
    },
  });

/** A decimal bound as minor units of its currency (exact: more decimals than the currency has is refused). */
function bound(value: unknown, currency: string, field: 'min' | 'max'): number | undefined {
  const exact = exactAmount(
    { float: undefined, decimal: value as string | null | undefined },
    currency,
    field,
    {
      required: false,
      at: '/input/price/',
    },
  );
  if (exact === undefined) return undefined;
  return Number(
    money(exact)
      .times(10 ** minorUnits(currency))
      .toFixed(0),
  );
}

/** Whether the selection asks for `field` (directly, or through a fragment). */
function selects(info: GraphQLResolveInfo, field: string): boolean {
  const visit = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((s) => {
      if (s.kind === Kind.FIELD) return s.name.value === field;
      if (s.kind === Kind.INLINE_FRAGMENT) return visit(s.selectionSet);
      return visit(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((n) => visit(n.selectionSet));
}

/** Whether the selection asks for any of `fields` at any depth (through fragments too). */
function selectsWithin(info: GraphQLResolveInfo, fields: ReadonlySet<string>): boolean {
  const visit = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((s) => {
      if (s.kind === Kind.FIELD) return fields.has(s.name.value) || visit(s.selectionSet);
      if (s.kind === Kind.INLINE_FRAGMENT) return visit(s.selectionSet);
      return visit(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((n) => visit(n.selectionSet));
}

/** The CatalogProduct fields that read its variants. */
const VARIANT_FIELDS: ReadonlySet<string> = new Set(['variants', 'priceRange']);

const mediaOf = (m: Media) => ({
  type: m.type,
  url: m.url,
  altText: m.altText ?? null,
  width: m.width ?? null,
  height: m.height ?? null,
});

const facetsOf = (f: SearchFacets, currency: string | undefined) => {
  const scale = 10 ** minorUnits(currency ?? 'USD');
  const decimal = (n: number) =>
    money(n)
      .dividedBy(scale)
      .toFixed(minorUnits(currency ?? 'USD'));
  return {
    categories: f.categories,
    brands: f.brands,
    conditions: f.conditions,
    options: f.options,
    availability: f.availability,
    prices: f.prices.map((b) => ({
      minDecimal: decimal(b.min),
      maxDecimal: b.max !== undefined ? decimal(b.max) : null,
      count: b.count,
    })),
  };
};

/** Loaders for one request (its memo): variants of the SKU-level products, by SKU. */
function variantLoader(ctx: RequestContext, products: CatalogProducts) {
  let loader = ctx.memo.get(products) as DataLoader<string, VariantOf | undefined> | undefined;
  if (!loader) {
    loader = new DataLoader((skus: readonly string[]) => products.variants(skus));
    ctx.memo.set(products, loader);
  }
  return loader;
}

/** A product's variants as Product objects, each carrying its product's id; the loader primed. */
function variantsOf(ctx: RequestContext, products: CatalogProducts, p: CatalogProduct): VariantOf[] {
  const loader = variantLoader(ctx, products);
  return p.variants.map((v) => {
    const variant = { ...v, productId: p.productId };
    loader.prime(v.sku, variant);
    return variant;
  });
}

/** The Product's variant fields (the SKU-level ones are pricing's own resolvers). */
const variantField =
  <T>(read: (v: VariantOf) => T) =>
  async (
    p: { sku: string } & Partial<VariantOf>,
    _: unknown,
    ctx: RequestContext,
    catalog: CatalogProducts,
  ) => {
    const v = p.productId !== undefined ? (p as VariantOf) : await variantLoader(ctx, catalog).load(p.sku);
    if (!v) throw new GraphQLError(`${p.sku} is not in the catalog`, { extensions: { code: 'NOT_FOUND' } });
    return read(v);
  };

export function catalogResolvers(
  catalog: CatalogProducts,
  quote: (
    input: { sku: string; quantity: number; context: Record<string, unknown> },
    ctx: RequestContext,
  ) => unknown,
) {
  const field =
    <T>(read: (v: VariantOf) => T) =>
    (p: { sku: string } & Partial<VariantOf>, args: unknown, ctx: RequestContext) =>
      variantField(read)(p, args, ctx, catalog);
  return {
    Query: {
      async searchProducts(_: unknown, args: SearchArgs, _ctx: RequestContext, info: GraphQLResolveInfo) {
        const i = args.input;
        const currency = i.price?.currency?.toUpperCase();
        let request: ReturnType<typeof searchRequest>;
        try {
          const input: SearchInput = {
            query: i.query ?? undefined,
            filters: {
              categories: i.categories ?? undefined,
              brands: i.brands ?? undefined,
              ...(i.price && currency
                ? {
                    price: {
                      currency,
                      min: bound(i.price.minDecimal, currency, 'min'),
                      max: bound(i.price.maxDecimal, currency, 'max'),
                    },
                  }
                : {}),
              available: i.availableOnly ?? undefined,
              options: i.options ?? undefined,
              conditions: i.conditions ?? undefined,
            },
            limit: args.first ?? undefined,
            cursor: args.after ?? undefined,
            facets: selects(info, 'facets'),
            variants: selectsWithin(info, VARIANT_FIELDS),
          };
          request = searchRequest(input);
        } catch (err) {
          if (err instanceof SearchInputError)
            throw badInput(err, err.pointer.startsWith('/limit') ? '' : '/input');
          throw err;
        }
        let page: Awaited<ReturnType<CatalogProducts['search']>>;
        try {
          page = await catalog.search(request);
        } catch (err) {
          if (err instanceof SearchInputError)
            throw badInput(new SearchInputError('/after', err.message), '');
          throw err;
        }
        return {
          totalCount: page.total,
          totalCountExact: page.totalCapped !== true,
          correctedQuery: page.correctedQuery ?? null,
          edges: page.products.map((node, n) => ({ cursor: page.cursors[n], node })),
          nodes: page.products,
          pageInfo: { hasNextPage: page.nextCursor !== undefined, endCursor: page.cursors.at(-1) ?? null },
          facets: page.facets
            ? facetsOf(page.facets, currency)
            : {
                categories: [],
                brands: [],
                conditions: [],
                options: [],
                availability: { available: 0, unavailable: 0 },
                prices: [],
              },
        };
      },
      catalogProduct: async (_: unknown, { id }: { id: string }) =>
        (await catalog.product(id))?.product ?? null,
    },
    CatalogProduct: {
      __resolveReference: async (ref: { id: string }) => (await catalog.product(ref.id))?.product ?? null,
      id: (p: CatalogProduct) => p.productId,
      handle: (p: CatalogProduct) => p.handle ?? null,
      descriptionPlain: (p: CatalogProduct) => p.description.plain,
      descriptionHtml: (p: CatalogProduct) => p.description.html ?? null,
      url: (p: CatalogProduct) => p.url ?? null,
      brand: (p: CatalogProduct) => p.brand ?? null,
      media: (p: CatalogProduct) => p.media.map(mediaOf),
      variants: (p: CatalogProduct, _: unknown, ctx: RequestContext) => variantsOf(ctx, catalog, p),
      priceRange: (p: CatalogProduct, { currency }: { currency: string }) => {
        const amounts = p.variants.flatMap((v) =>
          v.prices[currency] !== undefined ? [money(v.prices[currency] as string)] : [],
        );
        if (amounts.length === 0) return null;
        const sorted = amounts.sort((a, b) => a.comparedTo(b));
        return { currency, minDecimal: sorted[0]?.toFixed(2), maxDecimal: sorted.at(-1)?.toFixed(2) };
      },
    },
    Product: {
      variantId: field((v) => v.variantId),
      title: field((v) => v.title),
      catalogProduct: async (p: { sku: string } & Partial<VariantOf>, args: unknown, ctx: RequestContext) => {
        const productId = await field((v) => v.productId)(p, args, ctx);
        return (await catalog.product(productId))?.product;
      },
      options: field((v) => v.options),
      barcodes: field((v) => v.barcodes),
      availability: field((v) => v.availability),
      available: field((v) => v.available),
      media: field((v) => v.media.map(mediaOf)),
      url: field((v) => v.url ?? null),
      listPrices: field((v) =>
        Object.entries(v.listPrices ?? {}).map(([currency, amount]) => ({
          sku: v.sku,
          currency,
          amount: Number(amount),
          amountDecimal: amount,
        })),
      ),
      quote: (
        p: { sku: string },
        { input }: { input: { quantity?: number | null } & Record<string, unknown> },
        ctx: RequestContext,
      ) => {
        const { quantity, ...context } = input;
        return quote({ sku: p.sku, quantity: quantity ?? 1, context }, ctx);
      },
    },
  };
}
