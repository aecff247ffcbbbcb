/**
 * The requests of the hot paths, as the benchmarks and the tests that guard those paths send
 * them: a 10-line cart quote over REST and GraphQL (the bench promotion applies to it), price
 * HITs and an agent order. The quotes need the catalog of CATALOG_SIZE=10000.
 */
import { generateCatalog } from '../subgraphs/pricing/catalog/generate.ts';

export interface RequestSpec {
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The catalog size the quote requests are drawn from. */
export const QUOTE_CATALOG_SIZE = 10_000;
/**
 * The smallest catalog every request here finds its SKUs in: the cart's ten are among the first
 * thousand the generator makes, the price requests' SKU-TOL-000001…100 among its first 2,000
 * (167 tools). A test of code paths, not of sizes, starts on it: seeding 10,000 products is
 * most of an embedded start's CPU (about 9 s, of which the catalog's seed and warm-up).
 */
export const HOT_PATH_CATALOG_SIZE = 2_000;
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

/** Ten USD-priced products, four of them tools, so the spec's sample rule applies. */
function cartLines(): { sku: string; quantity: number }[] {
  const usd = generateCatalog(QUOTE_CATALOG_SIZE).filter((p) => p.prices.USD !== undefined);
  const tools = usd.filter((p) => p.category === 'tools').slice(0, 4);
  const others = usd
    .filter((p) => p.category !== 'tools')
    .filter((_, i) => i % 97 === 0)
    .slice(0, 6);
  return [...tools, ...others].map((p, i) => ({ sku: p.sku, quantity: 1 + (i % 3) }));
}

function graphqlQuote(): RequestSpec {
  return {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query Quote($input: CartQuoteInput!) {
        cartQuote(input: $input) {
          id subtotalDecimal
          lines { sku name quantity basePriceDecimal unitPriceDecimal lineTotalDecimal appliedModifiers source }
          promotions { discountTotalDecimal totalDecimal applied { promotionId name amountDecimal allocations { sku amountDecimal } } }
          quoteToken
        }
      }`,
      variables: { input: { lines: cartLines(), currency: 'USD', region: 'EU', customerId: 'bench-1' } },
    }),
  };
}

function restQuote(): RequestSpec {
  const q = new URLSearchParams();
  for (const l of cartLines()) q.append('line', `${l.sku}:${l.quantity}`);
  q.set('currency', 'USD');
  q.set('region', 'EU');
  q.set('customerId', 'bench-1');
  return { method: 'GET', path: `/cart/quote?${q}` };
}

/** The 10-line cart quote, over GraphQL and over REST. */
export const QUOTE_REQUESTS = {
  graphql: graphqlQuote,
  rest: restQuote,
};

/** Price requests for 100 SKUs and contexts: after the first pass, every one a cache HIT. */
export const priceRequests = (): RequestSpec[] =>
  Array.from({ length: 100 }, (_, i) => ({
    method: 'POST' as const,
    path: '/v1/prices/calculate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sku: `SKU-TOL-${String(i + 1).padStart(6, '0')}`,
      currency: 'USD',
      region: ['EU', 'US'][i % 2],
      customerSegment: i % 4 ? 'STANDARD' : 'VIP',
      inventoryLevel: (i * 37) % 900,
    }),
  }));

/** One agent order (the bench's agent; its token bucket must be large for a load). */
export const orderRequests = (): RequestSpec[] => [
  {
    method: 'POST',
    path: '/api/v2/procurement/orders',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
    body: JSON.stringify({
      agent_id: 'agent-bench-01',
      sku: 'SKU-BEN-000001',
      quantity: 2,
      max_budget_usd: 120.5,
    }),
  },
];
