/** Shared helpers of the edge tests: a 10-line cart from the generated catalog, a promotion, HTTP calls. */

import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import type { Clock } from '../../lib/clock.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';

/** What harness/system.ts seeds (CATALOG_SIZE 500): the same SKUs in every process. */
export const CATALOG = generateCatalog(500);

/** Ten products priced in USD, at least four `tools` (the promotion's category). */
export function tenLines(): { sku: string; quantity: number; category: string }[] {
  const usd = CATALOG.filter((p) => p.prices.USD !== undefined);
  const tools = usd.filter((p) => p.category === 'tools').slice(0, 4);
  const others = usd.filter((p) => p.category !== 'tools').slice(0, 6);
  return [...tools, ...others].map((p, i) => ({ sku: p.sku, quantity: (i % 3) + 1, category: p.category }));
}

export interface Cart {
  lines: { sku: string; quantity: number }[];
  currency: string;
  region: string;
  customerSegment?: string;
  customerId?: string;
  coupons?: string[];
}

export function quoteQuery(cart: Cart): string {
  const q = new URLSearchParams();
  for (const l of cart.lines) q.append('line', `${l.sku}:${l.quantity}`);
  q.set('currency', cart.currency);
  q.set('region', cart.region);
  if (cart.customerSegment) q.set('customerSegment', cart.customerSegment);
  if (cart.customerId) q.set('customerId', cart.customerId);
  for (const c of cart.coupons ?? []) q.append('coupon', c);
  return q.toString();
}

export async function getQuote(baseUrl: string, cart: Cart) {
  const res = await fetch(`${baseUrl}/cart/quote?${quoteQuery(cart)}`);
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as QuoteReply,
  };
}

/** POST /cart/quote/verify as payment: `bearer` is a caller token granting `quotes:verify`. */
export async function verify(baseUrl: string, bearer: string, token: string, cart: Cart) {
  const res = await fetch(`${baseUrl}/cart/quote/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ token, cart }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { valid: boolean; reason?: string; claims?: Record<string, unknown> },
  };
}

export interface QuoteReply {
  id: string;
  lines: {
    sku: string;
    category: string;
    quantity: number;
    basePrice: number;
    unitPrice: number;
    appliedModifiers: string[];
    source: string;
    lineTotal: number;
    discount: number;
    total: number;
  }[];
  subtotal: number;
  discountTotal: number;
  total: number;
  promotions: { status: string; applied: { promotionId: string; amount: number }[]; notApplied: unknown[] };
  degraded: boolean;
  quoteToken: string;
  expiresAt: string;
  errors?: { pointer: string; message: string }[];
  status?: number;
}

export { TOOLS_RULE, UPSERT_PROMOTION };

export const cents = (n: number): number => Math.round(n * 100);

/**
 * Dependency timeouts for end-to-end tests: generous, so a loaded machine does not turn a slow
 * answer into a fallback. The faults these tests inject are refusals and dead servers; timeouts
 * themselves are tested with fakes (compose.test.ts).
 */
export const PATIENT = {
  PRICING_TIMEOUT_MS: '3000',
  PROMOTIONS_TIMEOUT_MS: '3000',
  QUOTE_CACHE_TIMEOUT_MS: '300',
};

/**
 * The embedded system of the quote tests: patient timeouts, the given clock, payment's caller
 * token (`quotes:verify`) and the tools promotion added through the gateway.
 */
export async function startQuoteSystem(clock: Clock): Promise<{ sys: TestSystem; payment: string }> {
  const sys = await startEmbedded(PATIENT, { clock });
  const payment = await sys.token(['quotes:verify'], 'payment');
  const res = await sys.gql(UPSERT_PROMOTION, {
    token: await sys.token(['promotions:admin']),
    variables: { rule: TOOLS_RULE },
  });
  if (res.errors) throw new Error(`could not add the tools promotion: ${JSON.stringify(res.errors)}`);
  return { sys, payment };
}
