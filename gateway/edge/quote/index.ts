import type { FastifyInstance } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { callerVerifierFor } from '../../../lib/auth/jwt.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import { quoteTokensFor } from '../../../lib/quote-token/index.ts';
import { createSqlCatalog } from '../../../subgraphs/pricing/catalog/catalog.ts';
import { skusOfCatalogChanged } from '../../../subgraphs/pricing/events.ts';
import { type PricingModule, priceCacheFor } from '../../../subgraphs/pricing/index.ts';
import type { PromotionService } from '../../../subgraphs/promotions/api.ts';
import type { EdgeDeps } from '../index.ts';
import { catalogPort } from './adapters/catalog.ts';
import { localPricing, localPromotions } from './adapters/local.ts';
import { remoteCache, remotePricing, remotePromotions, servicePool } from './adapters/remote.ts';
import { memoCatalog } from './catalog-memo.ts';
import { registerPricingFallback } from './graphql-fallback.ts';
import type { PromotionsPort, QuotePorts } from './ports.ts';
import { createGuard } from './resilience.ts';
import { quoteRoutes } from './routes.ts';
import { createQuoteService, type QuoteService } from './service.ts';

/** Catalog entries stay in the edge this long (see catalog-memo.ts). */
const CATALOG_MEMO_MS = 10_000;

const unavailablePromotions: PromotionsPort = {
  evaluate: async () => {
    throw new Error('promotions are not available in this process');
  },
};

function portsFor(deps: EdgeDeps): QuotePorts & { close(): Promise<void> } {
  const { platform, local } = deps;
  const pricingModule = local.pricing as PricingModule | undefined;
  if (pricingModule?.api) {
    const promotionsApi = (local.promotions as { api?: PromotionService } | undefined)?.api;
    return {
      catalog: catalogPort(pricingModule.api.catalog),
      ...localPricing(pricingModule.api),
      promotions: promotionsApi ? localPromotions(promotionsApi) : unavailablePromotions,
      close: async () => {},
    };
  }
  if (!platform.config.DATABASE_URL) {
    platform.log.warn(
      'GET /cart/quote reads the catalog pricing uses: set DATABASE_URL (the same PostgreSQL)',
    );
  }
  const pricingPool = servicePool(platform.config.PRICING_URL);
  const promotionsPool = servicePool(platform.config.PROMOTIONS_URL);
  return {
    // The catalog is the same store pricing reads (Postgres in the distributed topology): the
    // static price must be reachable when the pricing process is not.
    catalog: catalogPort(createSqlCatalog(platform.db)),
    cache: remoteCache(priceCacheFor(platform)),
    pricing: remotePricing(pricingPool),
    promotions: remotePromotions(promotionsPool),
    close: async () => {
      await Promise.all([pricingPool.close(), promotionsPool.close()]);
    },
  };
}

/**
 * GET /cart/quote, POST /cart/quote/verify and /.well-known/jwks.json, in either topology.
 * Returns the quote service, which the checkout sessions price through (gateway/agent/acp/).
 */
export async function registerQuoteRoutes(app: FastifyInstance, deps: EdgeDeps): Promise<QuoteService> {
  const { platform } = deps;
  const { config, clock, metrics } = platform;
  const tokens = await quoteTokensFor(config, clock);
  const ports = portsFor(deps);
  platform.onClose(() => ports.close());

  const breakerOpen = new Gauge({
    name: 'edge_dependency_breaker_open',
    help: 'Whether the circuit breaker of a quote dependency is open (1) or not (0)',
    labelNames: ['dependency'],
    registers: [metrics],
  });
  // Every breaker's series exists from the start (0: closed), so an alert can tell a closed
  // breaker from a process that never reported one.
  const guard = (name: string, timeoutMs: number) => {
    breakerOpen.labels(name).set(0);
    return createGuard(name, {
      timeoutMs,
      failures: config.QUOTE_BREAKER_FAILURES,
      halfOpenAfterMs: config.QUOTE_BREAKER_HALF_OPEN_MS,
      onStateChange: (dependency, open) => {
        breakerOpen.labels(dependency).set(open ? 1 : 0);
        platform.log.warn({ dependency, open }, `quote dependency breaker ${open ? 'opened' : 'closed'}`);
      },
    });
  };

  // The catalog store is guarded under the memo: a quote of recently quoted products needs no
  // store call and so no guard.
  const catalogGuard = guard('catalog', config.SUBGRAPH_TIMEOUT_MS);
  const store = ports.catalog;
  const catalog = memoCatalog(
    { lookup: (skus, currency) => catalogGuard.run(() => store.lookup(skus, currency)) },
    clock,
    CATALOG_MEMO_MS,
  );
  const unsubscribe = platform.bus.subscribe(EventTypes.BasePriceChanged, (event) => {
    const sku = (event.data as { sku?: unknown }).sku;
    if (typeof sku === 'string') catalog.drop([sku]);
  });
  platform.onClose(unsubscribe);
  // A catalog import's changes: prices, stock and removed SKUs alike.
  platform.onClose(
    platform.bus.subscribe(EventTypes.CatalogChanged, (event) =>
      catalog.drop(skusOfCatalogChanged(event.data)),
    ),
  );

  const lines = new Counter({
    name: 'edge_quote_lines_total',
    help: 'Quoted lines by price source (live, cache, last_known, static)',
    labelNames: ['source'],
    registers: [metrics],
  });
  const guards = {
    cache: guard('cache', config.QUOTE_CACHE_TIMEOUT_MS),
    pricing: guard('pricing', config.PRICING_TIMEOUT_MS),
    promotions: guard('promotions', config.PROMOTIONS_TIMEOUT_MS),
  };
  const service = createQuoteService({
    ports: { ...ports, catalog },
    guards,
    tokens,
    onLine: (source) => lines.labels(source).inc(),
  });
  registerPricingFallback(platform, service, guards.pricing);
  await app.register(quoteRoutes(service, tokens, await callerVerifierFor(config)));
  return service;
}
