import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { buildShieldedSubgraphSchema, type SubgraphName } from '../../../lib/graphql/subgraph.ts';
import { amountOf } from '../../../lib/money.ts';
import type { Platform } from '../../../lib/platform.ts';
import { Problem } from '../../../lib/problem.ts';
import { type CartInput, cartHash } from '../../../lib/quote-token/index.ts';
import { lineTotalCents, pricedLineFields } from '../../../subgraphs/promotions/quote/assemble.ts';
import { InProcessDataSource } from '../../datasources/in-process.ts';
import type { Guard } from './resilience.ts';
import type { QuoteService } from './service.ts';

/** A query-plan fetch that asks pricing for a cart quote. */
const CART_QUOTE_FETCH = /\bcartQuote\s*\(/;

const graphqlError = (err: unknown): unknown => {
  if (!(err instanceof Problem)) return err;
  return new GraphQLError(err.body.detail, {
    extensions: {
      code: err.status === 422 ? 'BAD_USER_INPUT' : 'SERVICE_UNAVAILABLE',
      ...(err.body.errors ? { errors: err.body.errors } : {}),
    },
  });
};

/**
 * The pricing subgraph's `Query.cartQuote`, answered by the edge when pricing cannot answer:
 * the same SDL, prices from the cache, the last-known price or the catalog's static price,
 * each line marked with its source. The query plan's fetch runs unchanged against it, and the
 * rest of the plan (promotions, the quote token) follows as usual.
 */
export function pricingFallbackSchema(service: QuoteService) {
  return buildShieldedSubgraphSchema('pricing', {
    Query: {
      cartQuote: async (_: unknown, { input }: { input: CartInput }) => {
        try {
          const lines = await service.priceCart(input);
          let subtotal = 0;
          const quoted = lines.map((l) => {
            const lineTotal = lineTotalCents(l);
            subtotal += lineTotal;
            const fields = pricedLineFields(l);
            // Extended in place, not cloned and extended (docs/performance.md, "Fifth pass").
            return Object.assign(fields, {
              lineTotal: amountOf(lineTotal),
              source: fields.source.toUpperCase(),
            });
          });
          return {
            id: cartHash(input),
            currency: input.currency,
            region: input.region,
            customerSegment: input.customerSegment ?? null,
            customerId: input.customerId ?? null,
            coupons: input.coupons ?? [],
            lines: quoted,
            subtotal: amountOf(subtotal),
          };
        } catch (err) {
          throw graphqlError(err);
        }
      },
    },
  });
}

/** A reply pricing gave that the fallback would not improve: data, or the caller's own mistake. */
const usable = (r: GatewayGraphQLResponse): boolean =>
  (r.data !== null && r.data !== undefined) ||
  (r.errors ?? []).some((e) => e.extensions?.code === 'BAD_USER_INPUT');

/**
 * Pricing's data source with the cart-quote fallback: a cart-quote fetch goes to pricing
 * under the edge's pricing guard (timeout and breaker shared with GET /cart/quote); when
 * pricing fails, times out, or its breaker is open, the same fetch runs against the fallback
 * schema. Other fetches (products, prices, the base-price mutation) pass through untouched.
 */
export class PricingWithFallback implements GraphQLDataSource<RequestContext> {
  constructor(
    private readonly primary: GraphQLDataSource<RequestContext>,
    private readonly fallback: GraphQLDataSource<RequestContext>,
    private readonly guard: Guard,
  ) {}

  async process(options: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    if (!CART_QUOTE_FETCH.test(options.request.query ?? '')) return this.primary.process(options);
    try {
      return await this.guard.run(async () => {
        const reply = await this.primary.process(options);
        if (!usable(reply)) throw new Error('pricing could not quote the cart');
        return reply;
      });
    } catch {
      return this.fallback.process(options);
    }
  }
}

const fallbacks = new WeakMap<
  Platform,
  { service: QuoteService; guard: Guard; source?: InProcessDataSource }
>();

/** Called by the edge once its quote service exists. */
export function registerPricingFallback(platform: Platform, service: QuoteService, guard: Guard): void {
  fallbacks.set(platform, { service, guard });
}

/**
 * The gateway's data source for a subgraph, with the cart-quote fallback around pricing's
 * (topology.ts). Unchanged for other subgraphs, or before the edge has registered.
 */
export function withQuoteFallback(
  platform: Platform,
  name: SubgraphName,
  source: GraphQLDataSource<RequestContext>,
): GraphQLDataSource<RequestContext> {
  const entry = fallbacks.get(platform);
  if (name !== 'pricing' || !entry) return source;
  entry.source ??= new InProcessDataSource(pricingFallbackSchema(entry.service));
  return new PricingWithFallback(source, entry.source, entry.guard);
}
