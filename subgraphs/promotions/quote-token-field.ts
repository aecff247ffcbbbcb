/**
 * CartQuote.quoteToken (owned by the edge-composition area): the GraphQL cart quote's signed
 * token. It lives in the promotions subgraph because that is where the query plan ends — the
 * priced lines arrive from pricing through `@requires` and the discounts are evaluated here — so
 * the token signs the same lines, promotions and totals the reply shows.
 */

import type { Platform } from '../../lib/platform.ts';
import { type CartInput, cartHash, type PriceSource, quoteTokensFor } from '../../lib/quote-token/index.ts';
import type { PromotionEvaluation, PromotionService } from './api.ts';
import { basketOfQuote } from './graphql.ts';
import { assembleQuote, type PricedLine } from './quote/assemble.ts';

/** The representation the gateway sends for quoteToken (its `@requires` fields). */
interface QuoteTokenRepresentation {
  id: string;
  currency: string;
  region: string;
  customerSegment?: string | null;
  customerId?: string | null;
  coupons?: string[] | null;
  lines: {
    sku: string;
    category: string;
    quantity: number;
    basePrice: number;
    unitPrice: number;
    lineTotal?: number | null;
    appliedModifiers: string[];
    source: 'LIVE' | 'CACHE' | 'LAST_KNOWN' | 'STATIC';
  }[];
}

const cartOf = (q: QuoteTokenRepresentation): CartInput => ({
  lines: q.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
  currency: q.currency,
  region: q.region,
  customerSegment: q.customerSegment ?? null,
  customerId: q.customerId ?? null,
  coupons: q.coupons ?? [],
});

const pricedLines = (q: QuoteTokenRepresentation): PricedLine[] =>
  q.lines.map((l) => ({
    entry: { sku: l.sku, name: l.sku, category: l.category, inventoryLevel: 0 },
    quantity: l.quantity,
    price: {
      basePrice: l.basePrice,
      unitPrice: l.unitPrice,
      appliedModifiers: l.appliedModifiers,
      source: l.source.toLowerCase() as PriceSource,
    },
  }));

/**
 * The promotions resolver map with CartQuote.quoteToken added. When a query asks for both
 * `promotions` and `quoteToken`, both resolve on the same entity representation: the basket is
 * evaluated once (memo by representation) and the token signs exactly what the reply shows.
 */
export async function withQuoteTokenField<R extends { CartQuote: Record<string, unknown> }>(
  resolvers: R,
  engine: Pick<PromotionService, 'evaluate'>,
  platform: Platform,
): Promise<R> {
  const tokens = await quoteTokensFor(platform.config, platform.clock);
  const evaluations = new WeakMap<object, Promise<PromotionEvaluation>>();
  const evaluationOf = (quote: object, evaluate: () => Promise<PromotionEvaluation>) => {
    let evaluation = evaluations.get(quote);
    if (!evaluation) {
      evaluation = evaluate();
      evaluations.set(quote, evaluation);
    }
    return evaluation;
  };
  type Resolver = (quote: object, ...rest: unknown[]) => Promise<PromotionEvaluation>;
  const promotions = resolvers.CartQuote.promotions as Resolver | undefined;
  const quoteToken = async (quote: QuoteTokenRepresentation): Promise<string> => {
    const cart = cartOf(quote);
    // Through the promotions resolver when there is one, so its error mapping holds either way.
    const evaluate = () => (promotions ? promotions(quote) : engine.evaluate(basketOfQuote(quote)));
    const evaluation = await evaluationOf(quote, evaluate);
    const id = cartHash(cart);
    const { facts } = assembleQuote(cart, id, pricedLines(quote), evaluation);
    return (await tokens.issue(cart, facts, id)).token;
  };
  return {
    ...resolvers,
    CartQuote: {
      ...resolvers.CartQuote,
      ...(promotions
        ? {
            promotions: (quote: object, ...rest: unknown[]) =>
              evaluationOf(quote, () => promotions(quote, ...rest)),
          }
        : {}),
      quoteToken,
    },
  };
}
