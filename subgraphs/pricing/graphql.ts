import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';
import { exactAmount } from '../../lib/graphql/decimal.ts';
import { buildShieldedSubgraphSchema } from '../../lib/graphql/subgraph.ts';
import { amountOf, centsOf, type Money, toNumber2 } from '../../lib/money.ts';
import { cartHash, cartViolations } from '../../lib/quote-token/canonical-cart.ts';
import type { CatalogPrice, Product } from './catalog/catalog.ts';
import type { CatalogImports } from './catalog/import/service.ts';
import type { CatalogProducts } from './catalog/products.ts';
import { catalogResolvers } from './catalog-graphql.ts';
import { catalogImportResolvers } from './catalog-import-graphql.ts';
import { InvalidBasePrice, NoBasePrice, UnknownSku } from './domain/errors.ts';
import type { PriceContext, PriceResponse } from './domain/types.ts';
import type { PriceResult, PricingService } from './service.ts';

type ProductContext = Omit<PriceContext, 'sku'>;

/** Loaders live for one GraphQL request (its memo), so each batch is one catalog/cache trip. */
interface Loaders {
  products: DataLoader<string, Product | undefined>;
  prices: DataLoader<string, CatalogPrice[]>;
  /** Keyed by the whole context: same SKU in two contexts are two prices. */
  priced: DataLoader<PriceContext, PriceResult, string>;
}

function loadersOf(ctx: RequestContext, service: PricingService): Loaders {
  let loaders = ctx.memo.get(service) as Loaders | undefined;
  if (!loaders) {
    loaders = {
      products: new DataLoader((skus) => service.catalog.products(skus)),
      prices: new DataLoader((skus) => service.catalog.pricesOf(skus)),
      priced: new DataLoader((ctxs) => service.calculateMany(ctxs, { matchCurrency: true }), {
        cacheKeyFn: (c) => JSON.stringify([c.sku, c.currency, c.region, c.customerSegment, c.inventoryLevel]),
      }),
    };
    ctx.memo.set(service, loaders);
  }
  return loaders;
}

/** Domain errors as GraphQL errors with a machine-readable code; anything else stays internal. */
function graphqlError(err: unknown): unknown {
  if (err instanceof UnknownSku || err instanceof NoBasePrice) {
    return new GraphQLError(err.message, { extensions: { code: 'NOT_FOUND' } });
  }
  if (err instanceof InvalidBasePrice) {
    return new GraphQLError(err.message, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return err;
}

const rethrow = (err: unknown): never => {
  throw graphqlError(err);
};

const priceOf = (r: PriceResult): PriceResponse => r.response;

const catalogPrice = (p: CatalogPrice) => ({ sku: p.sku, currency: p.currency, amount: toNumber2(p.amount) });

interface SetBasePriceInput {
  sku: string;
  currency: string;
  amount?: number | null;
  amountDecimal?: Money | null;
}

interface CartLine {
  sku: string;
  quantity: number;
}
interface CartQuoteInput {
  lines: CartLine[];
  currency: string;
  region: string;
  customerSegment?: string | null;
  customerId?: string | null;
  coupons?: string[] | null;
}

/** A cart without a segment is priced in this one (segments other than VIP change nothing). */
export const DEFAULT_SEGMENT = 'STANDARD';

/**
 * The id of a cart quote: the hash of its canonical cart, the same value a quote token carries
 * as `cart_hash`, so a frontend can match a token to its quote.
 */
export const cartId = (input: CartQuoteInput): string => cartHash(input);

async function cartQuote(loaders: Loaders, input: CartQuoteInput) {
  const violations = cartViolations(input);
  if (violations.length > 0) {
    throw new GraphQLError(
      `the cart cannot be quoted: ${violations.map((v) => `${v.pointer} ${v.message}`).join('; ')}`,
      {
        extensions: { code: 'BAD_USER_INPUT', errors: violations },
      },
    );
  }
  const products = await loaders.products.loadMany(input.lines.map((l) => l.sku));
  const segment = input.customerSegment ?? DEFAULT_SEGMENT;
  const ctxs = input.lines.map((l, i) => {
    const p = products[i];
    if (!p || p instanceof Error) throw graphqlError(p instanceof Error ? p : new UnknownSku(l.sku));
    return {
      sku: l.sku,
      currency: input.currency,
      region: input.region,
      customerSegment: segment,
      inventoryLevel: p.inventoryLevel,
    };
  });
  const prices = await loaders.priced.loadMany(ctxs);
  let subtotal = 0;
  const lines = input.lines.map((l, i) => {
    const p = products[i] as Product;
    const r = prices[i];
    if (!r || r instanceof Error) throw graphqlError(r);
    const lineTotal = centsOf(r.response.dynamicPrice) * l.quantity;
    subtotal += lineTotal;
    return {
      sku: l.sku,
      name: p.name,
      category: p.category,
      quantity: l.quantity,
      basePrice: r.response.basePrice,
      unitPrice: r.response.dynamicPrice,
      lineTotal: amountOf(lineTotal),
      appliedModifiers: r.response.appliedModifiers,
      source: r.cache === 'HIT' ? 'CACHE' : 'LIVE',
    };
  });
  return {
    id: cartId(input),
    currency: input.currency,
    region: input.region,
    customerSegment: input.customerSegment ?? null,
    customerId: input.customerId ?? null,
    coupons: input.coupons ?? [],
    lines,
    subtotal: amountOf(subtotal),
  };
}

export function pricingSchema(service: PricingService, catalog: CatalogProducts, imports: CatalogImports) {
  const importEdge = catalogImportResolvers(imports);
  const catalogEdge = catalogResolvers(catalog, ({ sku, quantity, context }, ctx) =>
    cartQuote(loadersOf(ctx, service), {
      ...(context as Omit<CartQuoteInput, 'lines'>),
      lines: [{ sku, quantity }],
    }),
  );
  return buildShieldedSubgraphSchema('pricing', {
    CatalogProduct: catalogEdge.CatalogProduct,
    Query: {
      ...catalogEdge.Query,
      ...importEdge.Query,
      price: (_: unknown, { context }: { context: PriceContext }, ctx: RequestContext) =>
        loadersOf(ctx, service).priced.load(context).then(priceOf, rethrow),
      product: (_: unknown, { sku }: { sku: string }, ctx: RequestContext) =>
        loadersOf(ctx, service)
          .products.load(sku)
          .then((p) => p ?? null),
      products: (_: unknown, { skus }: { skus: string[] }, ctx: RequestContext) =>
        loadersOf(ctx, service)
          .products.loadMany(skus)
          .then((ps) => ps.map((p) => (p instanceof Error ? rethrow(p) : (p ?? null)))),
      cartQuote: (_: unknown, { input }: { input: CartQuoteInput }, ctx: RequestContext) =>
        cartQuote(loadersOf(ctx, service), input),
    },
    Mutation: {
      ...importEdge.Mutation,
      setBasePrice: async (_: unknown, { input }: { input: SetBasePriceInput }, ctx: RequestContext) => {
        const amount = exactAmount(
          { float: input.amount, decimal: input.amountDecimal },
          input.currency,
          'amount',
          {
            at: '/input/',
          },
        );
        const change = { sku: input.sku, currency: input.currency, amount: amount as string };
        return service.setBasePrice(change, ctx.caller.subject).then(catalogPrice, rethrow);
      },
    },
    Product: {
      ...catalogEdge.Product,
      __resolveReference: (ref: { sku: string }, ctx: RequestContext) =>
        loadersOf(ctx, service)
          .products.load(ref.sku)
          .then((p) => p ?? null),
      basePrices: (p: Product, _: unknown, ctx: RequestContext) =>
        loadersOf(ctx, service)
          .prices.load(p.sku)
          .then((list) => list.map(catalogPrice)),
      price: (p: Product, { context }: { context: ProductContext }, ctx: RequestContext) =>
        loadersOf(ctx, service)
          .priced.load({ ...context, sku: p.sku })
          .then(priceOf, (err) => (err instanceof NoBasePrice ? null : rethrow(err))),
    },
  });
}
