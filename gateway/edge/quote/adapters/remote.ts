import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';
import type { PriceCache } from '../../../../subgraphs/pricing/cache/price-cache.ts';
import type {
  LivePrice,
  Price,
  PriceCachePort,
  PricingPort,
  PromotionEvaluation,
  PromotionsPort,
} from '../ports.ts';
import { RefusedInput } from '../resilience.ts';

/** Distributed topology: the edge reads the shared price cache (Redis) itself. */
export const remoteCache = (cache: PriceCache): PriceCachePort => ({
  fresh: async (keys) => (await cache.getMany(keys)).map((p) => p?.response),
  lastKnown: async (keys) => (await cache.lastKnownMany(keys)).map((p) => p?.response),
});

const JSON_HEADERS = { 'content-type': 'application/json' };

/** A keep-alive connection pool to one service; closed with the gateway. */
export const servicePool = (url: string): Pool =>
  new Pool(url, { connections: 32, keepAliveTimeout: 30_000, headersTimeout: 10_000, bodyTimeout: 10_000 });

/**
 * Pricing over HTTP: POST /v1/prices/calculate for each missed line, in parallel on one pooled
 * keep-alive connection set (pricing has no batch route; the misses are few once the cache is
 * warm). A line pricing cannot price comes back as an error for that line only.
 */
export function remotePricing(pool: Pool): PricingPort {
  return {
    calculate: (contexts, deadline) => {
      // Every line's request listens on the one timeout signal of this guarded call (up to 50
      // lines), and removes its listener when it completes: not a leak, so say how many.
      const signal = deadline.signal;
      setMaxListeners(contexts.length + 10, signal);
      return Promise.all(
        contexts.map(async (ctx): Promise<LivePrice> => {
          const res = await pool.request({
            method: 'POST',
            path: '/v1/prices/calculate',
            headers: JSON_HEADERS,
            body: JSON.stringify(ctx),
            signal,
          });
          const body = (await res.body.json()) as Price | { error: string };
          if (res.statusCode >= 500) throw new Error(`pricing answered ${res.statusCode}`);
          if (res.statusCode !== 200 || !('dynamicPrice' in body)) {
            return { error: 'error' in body ? body.error : `pricing answered ${res.statusCode}` };
          }
          return { price: body, cached: res.headers['x-cache'] === 'HIT' };
        }),
      );
    },
  };
}

/** Promotions over HTTP: POST /v1/promotions/evaluate with the priced basket. */
export function remotePromotions(pool: Pool): PromotionsPort {
  return {
    async evaluate(basket, deadline) {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/promotions/evaluate',
        headers: JSON_HEADERS,
        body: JSON.stringify(basket),
        signal: deadline.signal,
      });
      const body = await res.body.json();
      if (res.statusCode >= 400 && res.statusCode < 500)
        throw new RefusedInput(`promotions refused the basket (${res.statusCode})`);
      if (res.statusCode !== 200) throw new Error(`promotions answered ${res.statusCode}`);
      return body as PromotionEvaluation;
    },
  };
}
