import DataLoader from 'dataloader';
import type { Decimal } from 'decimal.js';
import type { Clock } from '../../lib/clock.ts';
import type { EventBus } from '../../lib/events/bus.ts';
import { type CloudEvent, EventTypes } from '../../lib/events/cloudevent.ts';
import type { Logger } from '../../lib/logger.ts';
import { money, toNumber2 } from '../../lib/money.ts';
import type { PriceCache } from './cache/price-cache.ts';
import type { Catalog, CatalogPrice, PriceRequest } from './catalog/catalog.ts';
import { InvalidBasePrice } from './domain/errors.ts';
import { applyModifiers } from './domain/modifiers.ts';
import {
  keyText,
  type PriceContext,
  type PriceKey,
  type PriceResponse,
  priceKeyOf,
  type StoredPrice,
  storedPrice,
} from './domain/types.ts';
import {
  type BasePriceChangedData,
  basePriceChanged,
  priceCalculated,
  publishBasePriceChanged,
  publishPriceCalculated,
  skusOfCatalogChanged,
} from './events.ts';

export type CacheStatus = 'HIT' | 'MISS';
export interface PriceResult extends StoredPrice {
  readonly cache: CacheStatus;
}

/** What the service counts; the HTTP layer exports them as Prometheus metrics. */
export interface PricingCounters {
  hits: number;
  misses: number;
  /** Calls to the catalog; each is one query however many SKUs it carries. */
  catalogReads: number;
  cacheRoundTrips: number;
  invalidations: number;
}

export interface PricingDeps {
  readonly catalog: Catalog;
  readonly cache: PriceCache;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly log: Pick<Logger, 'error' | 'warn'>;
  /** Shared with the catalog adapter, which counts its own queries. */
  readonly counters: PricingCounters;
}

export interface PricingService {
  /** POST /v1/prices/calculate: behaviours 1 to 7 of the spec. */
  calculate(ctx: PriceContext): Promise<PriceResult>;
  /**
   * A batch (GraphQL): one cache round trip and one catalog query however many contexts.
   * `matchCurrency` treats a stored price in another currency as a miss: a cart in USD must
   * not be priced in EUR because the key ignores currency. Errors are returned per item.
   */
  calculateMany(
    ctxs: readonly PriceContext[],
    opts?: { matchCurrency?: boolean },
  ): Promise<(PriceResult | Error)[]>;
  /** Last-known prices for the edge's fallback (behaviour 8); one round trip. */
  lastKnownMany(keys: readonly PriceKey[]): Promise<(StoredPrice | undefined)[]>;
  /** Role-restricted mutation: changes a base price, drops cached prices, emits BasePriceChanged. */
  setBasePrice(
    /** The amount as a number (REST JSON, read from its shortest text) or exact decimal text. */
    input: { sku: string; currency: string; amount: number | string },
    changedBy?: string,
  ): Promise<CatalogPrice>;
  /** Drops the cached prices of SKUs (what a BasePriceChanged event triggers in every instance). */
  invalidate(skus: readonly string[]): Promise<void>;
  readonly counters: PricingCounters;
  readonly catalog: Catalog;
  close(): void;
}

const CURRENCY = /^[A-Z]{3}$/;
const MAX_AMOUNT = money('999999999999.99');

/**
 * A stored price with its cache status, built field by field. `{ ...price, cache }` (a clone
 * that is then extended) gave every result a hidden class of its own in V8, and those classes
 * kept every young collection promoting (docs/performance.md, "Fifth pass").
 */
export const withStatus = (p: StoredPrice, cache: CacheStatus): PriceResult =>
  p.expiresAt === undefined
    ? { response: p.response, json: p.json, cache }
    : { response: p.response, json: p.json, expiresAt: p.expiresAt, cache };

export const newCounters = (): PricingCounters => ({
  hits: 0,
  misses: 0,
  catalogReads: 0,
  cacheRoundTrips: 0,
  invalidations: 0,
});

export function createPricingService(deps: PricingDeps): PricingService {
  const { catalog, cache, bus, clock, log, counters } = deps;
  /** Misses being computed, by key: concurrent misses for one key compute once. */
  const flights = new Map<string, { sku: string; promise: Promise<StoredPrice> }>();
  /** Bumped when a SKU is invalidated, so a computation that started before is not stored. */
  const generations = new Map<string, number>();
  // Concurrent REST misses in one tick share one catalog query.
  const baseLoader = new DataLoader<PriceRequest, Decimal>(async (requests) => catalog.basePrices(requests), {
    cache: false,
  });

  const respond = (ctx: PriceContext, base: Decimal): StoredPrice => {
    const { dynamicPrice, appliedModifiers } = applyModifiers(base, ctx.inventoryLevel, ctx.customerSegment);
    const response: PriceResponse = {
      sku: ctx.sku,
      basePrice: toNumber2(base),
      dynamicPrice: toNumber2(dynamicPrice),
      currency: ctx.currency,
      appliedModifiers,
      calculatedAt: new Date(clock.now()).toISOString(),
    };
    return storedPrice(response);
  };

  /**
   * Stores what was computed, unless its SKU was invalidated meanwhile: in this process (its
   * generation moved) or, with a shared cache, in any (its version moved; the cache checks that
   * when it stores). Emits the events.
   */
  const finish = async (
    done: { ctx: PriceContext; price: StoredPrice; generation: number; version?: number; store: boolean }[],
  ) => {
    const toStore = done.filter((d) => d.store && (generations.get(d.ctx.sku) ?? 0) === d.generation);
    counters.misses += done.length;
    if (toStore.length > 0) counters.cacheRoundTrips++;
    await Promise.all([
      toStore.length > 0 &&
        cache.setMany(
          toStore.map((d) => ({
            key: priceKeyOf(d.ctx),
            price: d.price,
            ...(d.version === undefined ? {} : { version: d.version }),
          })),
        ),
      ...done.map((d) => publishPriceCalculated(bus, priceCalculated(d.ctx, d.price.response))),
    ]);
  };

  /** With a shared cache, the SKUs' versions, read before the catalog (PriceCache.versions). */
  const versionsOf = async (skus: readonly string[]): Promise<readonly (number | undefined)[]> => {
    if (!cache.versions) return [];
    counters.cacheRoundTrips++;
    return cache.versions(skus);
  };

  const fly = (key: string, sku: string, promise: Promise<StoredPrice>) => {
    const flight = { sku, promise };
    flights.set(key, flight);
    const land = () => {
      if (flights.get(key) === flight) flights.delete(key);
    };
    promise.then(land, land);
    return promise;
  };

  const miss = (ctx: PriceContext, key: string): Promise<StoredPrice> =>
    fly(
      key,
      ctx.sku,
      (async () => {
        const generation = generations.get(ctx.sku) ?? 0;
        const [version] = await versionsOf([ctx.sku]);
        const base = await baseLoader.load({ sku: ctx.sku, currency: ctx.currency });
        const price = respond(ctx, base);
        await finish([
          { ctx, price, generation, ...(version === undefined ? {} : { version }), store: true },
        ]);
        return price;
      })(),
    );

  const joined = async (promise: Promise<StoredPrice>): Promise<PriceResult> => {
    const price = await promise;
    counters.hits++;
    return withStatus(price, 'HIT');
  };

  const service: PricingService = {
    counters,
    catalog,

    async calculate(ctx) {
      const key = keyText(ctx);
      const inFlight = flights.get(key);
      if (inFlight) return joined(inFlight.promise);
      counters.cacheRoundTrips++;
      const [hit] = await cache.getMany([ctx]);
      if (hit) {
        counters.hits++;
        return withStatus(hit, 'HIT');
      }
      const started = flights.get(key);
      if (started) return joined(started.promise);
      return withStatus(await miss(ctx, key), 'MISS');
    },

    async calculateMany(ctxs, opts = {}) {
      const results: (PriceResult | Error | undefined)[] = new Array(ctxs.length);
      const keys = ctxs.map((c) => keyText(c));
      counters.cacheRoundTrips++;
      const cached = ctxs.length > 0 ? await cache.getMany(ctxs) : [];
      const usable = (c: PriceContext, p: StoredPrice | undefined) =>
        p !== undefined && (!opts.matchCurrency || p.response.currency === c.currency);

      // Group the rest by key: the first context of a key computes (and is stored); the others
      // share its result, unless they need another currency (then computed, not stored).
      const leaders = new Map<string, number>();
      const compute: { i: number; store: boolean }[] = [];
      const followers: { i: number; leader: number }[] = [];
      const waits: { i: number; promise: Promise<StoredPrice> }[] = [];
      ctxs.forEach((c, i) => {
        const hit = cached[i];
        if (usable(c, hit) && hit) {
          counters.hits++;
          results[i] = withStatus(hit, 'HIT');
          return;
        }
        const key = keys[i] as string;
        const flight = flights.get(key);
        const leader = leaders.get(key);
        if (flight && !opts.matchCurrency) waits.push({ i, promise: flight.promise });
        else if (leader === undefined) {
          leaders.set(key, i);
          compute.push({ i, store: true });
        } else if (ctxs[leader]?.currency === c.currency) followers.push({ i, leader });
        else compute.push({ i, store: false });
      });

      if (compute.length > 0) {
        const generation = compute.map(({ i }) => generations.get((ctxs[i] as PriceContext).sku) ?? 0);
        const batch = (async () => {
          const versions = await versionsOf(compute.map(({ i }) => (ctxs[i] as PriceContext).sku));
          const bases = await catalog.basePrices(compute.map(({ i }) => ctxs[i] as PriceContext));
          const done: Parameters<typeof finish>[0] = [];
          compute.forEach(({ i, store }, n) => {
            const base = bases[n];
            const ctx = ctxs[i] as PriceContext;
            if (base instanceof Error || base === undefined) {
              results[i] = base ?? new Error('no base price');
              return;
            }
            const price = respond(ctx, base);
            results[i] = withStatus(price, 'MISS');
            const version = versions[n];
            done.push({
              ctx,
              price,
              generation: generation[n] ?? 0,
              ...(version === undefined ? {} : { version }),
              store,
            });
          });
          await finish(done);
        })();
        // Concurrent single requests for these keys join this batch instead of recomputing.
        for (const { i, store } of compute) {
          if (!store) continue;
          const ctx = ctxs[i] as PriceContext;
          void fly(
            keys[i] as string,
            ctx.sku,
            batch.then(() => {
              const r = results[i];
              if (r instanceof Error || r === undefined) throw r ?? new Error('not priced');
              return r;
            }),
          ).catch(() => {});
        }
        await batch;
      }
      for (const { i, leader } of followers) {
        const r = results[leader];
        if (r instanceof Error || r === undefined) results[i] = r ?? new Error('not priced');
        else {
          counters.hits++;
          results[i] = withStatus(r, 'HIT');
        }
      }
      await Promise.all(
        waits.map(async ({ i, promise }) => {
          results[i] = await joined(promise).catch((err: Error) => err);
        }),
      );
      return results as (PriceResult | Error)[];
    },

    async lastKnownMany(keys) {
      counters.cacheRoundTrips++;
      return cache.lastKnownMany(keys);
    },

    async setBasePrice(input, changedBy) {
      if (!CURRENCY.test(input.currency)) {
        throw new InvalidBasePrice(
          `currency must be three capital letters (ISO 4217), got ${input.currency}`,
        );
      }
      if (typeof input.amount === 'number' && !Number.isFinite(input.amount)) {
        throw new InvalidBasePrice('amount must be a finite number');
      }
      const amount = money(input.amount);
      if (amount.lte(0) || amount.gt(MAX_AMOUNT) || amount.decimalPlaces() > 2) {
        throw new InvalidBasePrice(
          'amount must be greater than 0, at most 999999999999.99, with at most 2 decimals',
        );
      }
      const change = await catalog.setBasePrice(input.sku, input.currency, amount);
      // Here first, so the caller's next request already misses; then every other instance.
      await service.invalidate([input.sku]);
      await publishBasePriceChanged(bus, basePriceChanged(change, new Date(clock.now()), changedBy));
      return { sku: change.sku, currency: change.currency, amount: change.amount };
    },

    async invalidate(skus) {
      for (const sku of skus) {
        generations.set(sku, (generations.get(sku) ?? 0) + 1);
        for (const [key, flight] of flights) if (flight.sku === sku) flights.delete(key);
      }
      counters.invalidations += skus.length;
      counters.cacheRoundTrips++;
      await cache.invalidateSkus(skus);
    },

    close: () => {
      unsubscribe();
      unsubscribeCatalog();
    },
  };

  // Every instance drops its cached prices when any instance changes a base price.
  const unsubscribe = bus.subscribe(EventTypes.BasePriceChanged, async (event: CloudEvent) => {
    const data = event.data as Partial<BasePriceChangedData> | undefined;
    if (typeof data?.sku !== 'string') {
      log.warn({ eventId: event.id }, 'BasePriceChanged without a sku ignored');
      return;
    }
    try {
      await service.invalidate([data.sku]);
    } catch (err) {
      log.error({ err, sku: data.sku }, 'could not drop cached prices after a base price change');
    }
  });

  // And when a catalog import changed or removed SKUs (the instance that committed it has already).
  const unsubscribeCatalog = bus.subscribe(EventTypes.CatalogChanged, async (event: CloudEvent) => {
    const skus = skusOfCatalogChanged(event.data);
    if (skus.length === 0) return;
    try {
      await service.invalidate(skus);
    } catch (err) {
      log.error({ err, skus: skus.length }, 'could not drop cached prices after a catalog import');
    }
  });

  return service;
}
