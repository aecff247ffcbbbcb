import type { PricingService } from '../../../../subgraphs/pricing/service.ts';
import { BasketInvalid, type PromotionService } from '../../../../subgraphs/promotions/api.ts';
import type { PriceCachePort, PricingPort, PromotionsPort } from '../ports.ts';
import { RefusedInput } from '../resilience.ts';

/**
 * Embedded topology: pricing and promotions run in this process. Pricing's calculateMany reads
 * the price cache first and computes only the misses, in one call, so the edge does not read the
 * cache separately (no `fresh`); a HIT still shows as source `cache`.
 */
export function localPricing(api: PricingService): { cache: PriceCachePort; pricing: PricingPort } {
  return {
    cache: {
      lastKnown: async (keys) => (await api.lastKnownMany(keys)).map((p) => p?.response),
    },
    pricing: {
      async calculate(contexts) {
        const results = await api.calculateMany(contexts, { matchCurrency: true });
        return results.map((r) =>
          r instanceof Error ? { error: r.message } : { price: r.response, cached: r.cache === 'HIT' },
        );
      },
    },
  };
}

export const localPromotions = (service: PromotionService): PromotionsPort => ({
  async evaluate(basket) {
    try {
      return await service.evaluate(basket);
    } catch (err) {
      if (err instanceof BasketInvalid) throw new RefusedInput(err.message);
      throw err;
    }
  },
});
