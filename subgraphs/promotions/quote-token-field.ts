/**
 * CartQuote.quoteToken (owned by the edge-composition area): the GraphQL cart quote's signed
 * token. It lives in the promotions subgraph because that is where the query plan ends — the
 * priced lines arrive from pricing through `@requires` and the discounts are evaluated here — so
 * the token signs the same lines, promotions and totals the reply shows.
 */
import { assembleQuote, type PricedLine } from '../../gateway/edge/quote/assemble.ts';
import type { Platform } from '../../lib/platform.ts';
import { type CartInput, cartHash, type PriceSource, quoteTokensFor } from '../../lib/quote-token/index.ts';
import type { PromotionService } from './api.ts';
import { basketOfQuote } from './graphql.ts';

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

/** The promotions resolver map with CartQuote.quoteToken added. */
export async function withQuoteTokenField<R extends { CartQuote: Record<string, unknown> }>(
  resolvers: R,
  engine: Pick<PromotionService, 'evaluate'>,
  platform: Platform,
): Promise<R> {
  const tokens = await quoteTokensFor(platform.config, platform.clock);
  const quoteToken = async (quote: QuoteTokenRepresentation): Promise<string> => {
    const cart = cartOf(quote);
    const evaluation = await engine.evaluate(basketOfQuote(quote));
    const id = cartHash(cart);
    const { facts } = assembleQuote(cart, id, pricedLines(quote), evaluation);
    return (await tokens.issue(cart, facts, id)).token;
  };
  return { ...resolvers, CartQuote: { ...resolvers.CartQuote, quoteToken } };
}
