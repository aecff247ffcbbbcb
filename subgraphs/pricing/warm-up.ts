import type { InjectOptions } from 'fastify';
import { GATEWAY_SECRET_HEADER } from '../../lib/auth/shared-secret.ts';
import type { Db } from '../../lib/db/index.ts';

const CART_QUOTE = `query WarmUpQuote($input: CartQuoteInput!) {
  cartQuote(input: $input) {
    id currency region customerSegment customerId coupons subtotal subtotalDecimal
    lines { sku name category quantity basePrice unitPrice lineTotal basePriceDecimal unitPriceDecimal lineTotalDecimal appliedModifiers source }
  }
}`;

/**
 * The n-th warm-up price of one of `skus` (POST /v1/prices/calculate) in varied contexts (region,
 * segment, inventory band), so each modifier path runs before ready; the embedded process sends
 * it to itself too (gateway/warm-up.ts).
 */
export function priceCalculateWarmUp(skus: readonly string[]): (n: number) => InjectOptions {
  return (n) => ({
    method: 'POST',
    url: '/v1/prices/calculate',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      sku: skus[n % skus.length],
      currency: 'USD',
      region: n % 2 ? 'EU' : 'US',
      customerSegment: n % 4 ? 'STANDARD' : 'VIP',
      inventoryLevel: (n * 37) % 900,
    }),
  });
}

/**
 * What the gateways send pricing most, for its warm-up before ready (lib/http/warm-up.ts): the
 * price of a catalog SKU (POST /v1/prices/calculate, the REST cart quote's call, in varied
 * contexts) and the GraphQL cart quote's part, on the first ten USD-priced SKUs. The first price
 * of each SKU publishes one PriceCalculated event, as any caller's would.
 */
export async function pricingWarmUpRequests(
  db: Db,
  secret: string,
): Promise<((n: number) => InjectOptions)[]> {
  const skus = (
    await db.query<{ sku: string }>(
      `SELECT p.sku FROM catalog_products p JOIN catalog_base_prices b ON b.sku = p.sku AND b.currency = 'USD'
       ORDER BY p.sku LIMIT 10`,
    )
  ).map((r) => r.sku);
  if (skus.length === 0) return [];
  const lines = skus.map((sku, i) => ({ sku, quantity: 1 + (i % 3) }));
  const graphql = JSON.stringify({
    query: CART_QUOTE,
    variables: { input: { lines, currency: 'USD', region: 'US', customerId: 'warm-up' } },
  });
  const json = { 'content-type': 'application/json' };
  return [
    priceCalculateWarmUp(skus),
    () => ({
      method: 'POST',
      url: '/graphql',
      headers: { ...json, [GATEWAY_SECRET_HEADER]: secret },
      payload: graphql,
    }),
  ];
}
