import type { FastifyInstance } from 'fastify';
import {
  atLeastOf,
  openConnections,
  sendUntil,
  type WarmUpReport,
  type WarmUpSend,
} from '../lib/http/warm-up.ts';
import type { Platform } from '../lib/platform.ts';
import { acpApiBaseUrl, ucpApiBaseUrl } from '../lib/public-origin.ts';
import { priceCalculateWarmUp } from '../subgraphs/pricing/warm-up.ts';
import { checkoutWarmUp, orderWarmUp, ucpCheckoutWarmUp } from './agent/rehearsal.ts';

/** The path of an API base URL (`/acp`, `/ucp`), where its routes are served. */
const pathOf = (base: string) => new URL(base).pathname.replace(/\/+$/, '');

/** The contract's SKU form (schemas/openapi): a catalog SKU of another form cannot be ordered. */
const ORDER_SKU = /^SKU-[A-Z]{3}-\d{6}$/;

export type { WarmUpReport };

/**
 * Ready means warm (issue 29, docs/performance.md "Warm start"). A process that has just
 * started runs its JavaScript in V8's interpreter and its embedded store's WebAssembly through
 * its baseline compiler, one function at a time as each is first called, and its caches are
 * empty: measured, the first second of traffic after ready waited up to seconds at half the
 * steady load. So before /readyz says ready, the process sends itself the hot read paths (the
 * REST and GraphQL cart quotes and the price calculation, on real catalog SKUs) over its own
 * loopback socket (Fastify's inject where it does not listen; lib/http/warm-up.ts), until the
 * budget is spent, and the first real callers
 * find compiled code and filled caches.
 *
 * Orders too (issue 48): measured, a cold system met 950 quotes/s with 100 orders/s beside them
 * with seconds of queueing, though each path alone was nearly warm. An order is a purchase, so
 * the warm-up's orders are rehearsals (gateway/agent/rehearsal.ts): a reserved identity and this
 * process's token; every step of the chain runs, the store's statements run in a transaction
 * that is rolled back, the Idempotency-Key and any spend are given back, and the audit records
 * one entry saying the warm-up ran (`--no-wasm-lazy-compilation` was measured and not kept: 22
 * MB of RSS; docs/performance.md, "Warm start").
 *
 * Side effects, on purpose the same as any caller's: quotes fill the price cache and the
 * quote cache, the first price of each SKU publishes one PriceCalculated event.
 *
 * The distributed gateway runs the same warm-up (issue 29): its quotes go over HTTP to the
 * pricing and promotions processes, so the gateway's pools to them open and their paths warm
 * too; the price route is left out there (pricing serves it itself). First it opens its SQL
 * pool and reaches Redis (lib/http/warm-up.ts), which the orders use.
 */

const QUOTE = `query WarmUpQuote($input: CartQuoteInput!) {
  cartQuote(input: $input) {
    id subtotalDecimal
    lines { sku name quantity basePriceDecimal unitPriceDecimal lineTotalDecimal appliedModifiers source }
    promotions { discountTotalDecimal totalDecimal applied { promotionId name amountDecimal allocations { sku amountDecimal } } }
    quoteToken
  }
}`;

export async function warmUp(
  app: FastifyInstance,
  platform: Platform,
  o: { budgetMs: number; concurrency?: number },
): Promise<WarmUpReport> {
  // The token is accepted only while this runs; the audit's entry is written when it ends.
  app.rehearsals.start();
  try {
    return await warmPaths(app, platform, o);
  } finally {
    await app.rehearsals.finish().catch((err) => platform.log.warn({ err }, 'warm-up audit entry failed'));
  }
}

async function warmPaths(
  app: FastifyInstance,
  platform: Platform,
  o: { budgetMs: number; concurrency?: number },
): Promise<WarmUpReport> {
  const started = performance.now();
  if (o.budgetMs > 0) await openConnections(platform);
  const skus = (
    await platform.db.query<{ sku: string }>(
      `SELECT p.sku FROM catalog_products p JOIN catalog_base_prices b ON b.sku = p.sku AND b.currency = 'USD'
       ORDER BY p.sku LIMIT 10`,
    )
  ).map((r) => r.sku);
  if (skus.length === 0 || o.budgetMs <= 0)
    return { ms: performance.now() - started, requests: 0, failed: 0 };
  const lines = skus.map((sku, i) => ({ sku, quantity: 1 + (i % 3) }));
  const rest = new URLSearchParams(lines.map((l): [string, string] => ['line', `${l.sku}:${l.quantity}`]));
  rest.set('currency', 'USD');
  rest.set('region', 'US');
  rest.set('customerId', 'warm-up');
  const graphql = JSON.stringify({
    query: QUOTE,
    variables: { input: { lines, currency: 'USD', region: 'US', customerId: 'warm-up' } },
  });
  const orderSkus = skus.filter((s) => ORDER_SKU.test(s));
  // Only the rehearsals carry this process's token: a quote or price request goes as a caller's
  // does, with no header a caller would not send, so the code that reads its headers is compiled
  // for the objects callers make (docs/performance.md, "Second 0 counted").
  const token = app.rehearsals.token;
  const sends: WarmUpSend[] = [
    () => ({ method: 'GET', url: `/cart/quote?${rest}` }),
    () => ({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: graphql,
    }),
    priceCalculateWarmUp(skus),
    ...(platform.config.WARM_UP_ORDERS
      ? [
          orderWarmUp(
            platform.config.SPIFFE_TRUST_DOMAINS[0] ?? 'example.org',
            orderSkus[0] ?? 'SKU-WRM-000001',
            token,
          ),
          ...(orderSkus.length > 0
            ? [
                checkoutWarmUp(pathOf(acpApiBaseUrl(platform.config)), orderSkus, token),
                ucpCheckoutWarmUp(pathOf(ucpApiBaseUrl(platform.config)), orderSkus, token),
              ]
            : []),
        ]
      : []),
  ];
  // A few at a time, as callers come (a lane per kind: lib/http/warm-up.ts): the paths'
  // concurrent parts (batching, caches) warm too.
  const sent = await sendUntil(app, sends, {
    deadline: started + o.budgetMs,
    concurrency: o.concurrency ?? 4,
    ...atLeastOf(platform.config, started),
  });
  return { ms: performance.now() - started, ...sent };
}
