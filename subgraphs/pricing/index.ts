import { Counter, Gauge } from 'prom-client';
import { callerVerifierFor } from '../../lib/auth/jwt.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { createRedis } from '../../lib/redis.ts';
import { createMemoryPriceCache } from './cache/memory.ts';
import { createNearPriceCache } from './cache/near.ts';
import type { PriceCache } from './cache/price-cache.ts';
import { createRedisPriceCache } from './cache/redis.ts';
import { type Catalog, countingCatalog, createSqlCatalog, seedCatalog } from './catalog/catalog.ts';
import { createFeedPusher } from './catalog/feed/push.ts';
import { settleBulkIndexing } from './catalog/import/gin.ts';
import { createCatalogImports } from './catalog/import/service.ts';
import { migrateCatalog } from './catalog/migrations.ts';
import { createMirroredCatalog } from './catalog/mirror.ts';
import { type CatalogProducts, createSqlCatalogProducts } from './catalog/products.ts';
import { catalogFeedRoutes } from './catalog-http.ts';
import { catalogImportRoutes } from './catalog-import-http.ts';
import { publishCatalogChanged, skusOfCatalogChanged } from './events.ts';
import { pricingSchema } from './graphql.ts';
import { pricingRoutes } from './http.ts';
import { createPricingService, newCounters, type PricingCounters, type PricingService } from './service.ts';
import { pricingWarmUpRequests } from './warm-up.ts';

export interface PricingModule extends SubgraphModule {
  /** For the edge in the same process: prices, last-known prices and the static catalog. */
  readonly api: PricingService;
  /** For the gateway in the same process: catalog search and lookup. */
  readonly catalogProducts: CatalogProducts;
}

/**
 * The price cache of a platform: Redis when REDIS_URL is set, else process memory. The Redis
 * cache gets its own connection with auto-pipelining: concurrent requests' reads and writes in
 * one tick go out as one write, instead of one syscall each.
 */
export function priceCacheFor(platform: Platform): PriceCache {
  const { config } = platform;
  if (!config.REDIS_URL)
    return createMemoryPriceCache(platform.clock, Math.max(config.PRICE_CACHE_MAX_ENTRIES, 1));
  const connection = createRedis(config);
  // ioredis reads this option on every command, so it can be turned on for this connection only.
  connection.options.enableAutoPipelining = true;
  platform.onClose(() => connection.disconnect());
  const shared = createRedisPriceCache(connection, config.REDIS_KEY_PREFIX, platform.clock);
  if (config.PRICE_CACHE_MAX_ENTRIES === 0) return shared;
  const near = createNearPriceCache(shared, platform.clock, config.PRICE_CACHE_MAX_ENTRIES);
  // Whoever changed the price dropped the shared entries; every process drops its near copies.
  platform.onClose(
    platform.bus.subscribe(EventTypes.BasePriceChanged, (event) => {
      const sku = (event.data as { sku?: unknown } | undefined)?.sku;
      if (typeof sku === 'string') near.forget([sku]);
    }),
  );
  platform.onClose(
    platform.bus.subscribe(EventTypes.CatalogChanged, (event) =>
      near.forget(skusOfCatalogChanged(event.data)),
    ),
  );
  return near;
}

function exportCounters(platform: Platform, counters: PricingCounters): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [platform.metrics],
      collect() {
        this.set(read());
      },
    });
  gauge('pricing_cache_hits', 'Price requests served from the cache (X-Cache: HIT)', () => counters.hits);
  gauge('pricing_cache_misses', 'Prices computed on a cache miss (X-Cache: MISS)', () => counters.misses);
  gauge(
    'pricing_catalog_reads',
    'Catalog reads by pricing (one SQL query each on PostgreSQL)',
    () => counters.catalogReads,
  );
  gauge('pricing_cache_round_trips', 'Round trips to the price cache', () => counters.cacheRoundTrips);
  gauge('pricing_cache_invalidations', 'SKUs whose cached prices were dropped', () => counters.invalidations);
}

/**
 * The pricing subgraph: catalog (embedded store or Postgres, seeded on first start), price
 * cache (memory or Redis), the pure modifiers, PriceCalculated / BasePriceChanged events, the
 * REST route of the spec and the GraphQL schema of schemas/pricing.graphql.
 */
export async function createPricingSubgraph(platform: Platform): Promise<PricingModule> {
  const schemaOfCatalog = await migrateCatalog(platform.db);
  const seeded = await seedCatalog(platform.db, platform.config.CATALOG_SIZE);
  if (seeded > 0) platform.log.info({ products: seeded }, 'catalog seeded');
  // A process stopped in an import's commit may have left the GIN indexes gathering keys.
  await settleBulkIndexing(platform.db).catch((err) =>
    platform.log.warn({ err }, 'catalog indexes not settled (fastupdate)'),
  );
  const counters = newCounters();
  const store = createSqlCatalog(platform.db);
  // Embedded: PGlite is this process's own store, mirrored in memory (see catalog/mirror.ts).
  const catalog: Catalog =
    platform.db.kind === 'pglite' ? await createMirroredCatalog(platform.db, store) : store;
  const service = createPricingService({
    catalog: countingCatalog(catalog, () => counters.catalogReads++),
    cache: priceCacheFor(platform),
    bus: platform.bus,
    clock: platform.clock,
    log: platform.log,
    counters,
  });
  exportCounters(platform, counters);
  const catalogProducts = createSqlCatalogProducts(platform.db, {
    trigram: schemaOfCatalog.trigram,
    secret: platform.config.GATEWAY_SHARED_SECRET,
    exactUpTo: platform.config.CATALOG_EXACT_SEARCH_UP_TO,
    rememberMs: platform.config.CATALOG_REMEMBER_MS,
    clock: platform.clock,
  });
  // A search remembers corrections learnt from the catalog's words: every instance forgets them
  // when an import changes the catalog (this one at once too: `changed` below).
  platform.onClose(platform.bus.subscribe(EventTypes.CatalogChanged, () => catalogProducts.catalogChanged()));
  const { config } = platform;
  const pushes = new Counter({
    name: 'catalog_feed_pushed_products_total',
    help: 'Products upserted to the agent platform Feed API (ACP_FEED_API_URL), by outcome',
    labelNames: ['outcome'],
    registers: [platform.metrics],
  });
  const pusher = config.ACP_FEED_API_URL
    ? createFeedPusher(
        {
          db: platform.db,
          log: platform.log,
          clock: platform.clock,
          onOutcome: (o, n) => pushes.inc({ outcome: o }, n),
        },
        {
          url: config.ACP_FEED_API_URL,
          ...(config.ACP_FEED_API_TOKEN ? { token: config.ACP_FEED_API_TOKEN } : {}),
          targetCountry: config.ACP_FEED_TARGET_COUNTRY,
          currency: config.ACP_FEED_CURRENCY,
        },
      )
    : undefined;
  // A price set here reaches the platform's feed too.
  const served: PricingService = pusher
    ? {
        ...service,
        async setBasePrice(input, changedBy) {
          const r = await service.setBasePrice(input, changedBy);
          pusher.changed([r.sku]);
          return r;
        },
      }
    : service;
  const imports = createCatalogImports({
    db: platform.db,
    clock: platform.clock,
    log: platform.log,
    // Here first (this process's caches and the embedded mirror), then every other instance.
    async changed(importId, changedSkus, removedSkus) {
      const skus = [...changedSkus, ...removedSkus];
      await catalog.reload?.(skus);
      catalogProducts.catalogChanged();
      await service.invalidate(skus);
      await publishCatalogChanged(platform.bus, {
        importId,
        changedSkus,
        removedSkus,
        at: new Date(platform.clock.now()),
      });
    },
  });
  return {
    name: 'pricing',
    schema: pricingSchema(served, catalogProducts, imports),
    catalogProducts,
    routes: async (app) => {
      await app.register(pricingRoutes(service));
      await app.register(catalogFeedRoutes(platform.db, platform.clock));
      await app.register(catalogImportRoutes(imports, await callerVerifierFor(platform.config)));
    },
    api: service,
    warmUpRequests: () => pricingWarmUpRequests(platform.db, platform.config.GATEWAY_SHARED_SECRET),
    async close() {
      await imports.settled();
      await pusher?.close();
      service.close();
    },
  };
}
