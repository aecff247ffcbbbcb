/**
 * What the cart quote is composed from, as small interfaces: the embedded topology fills them
 * in process (adapters/local.ts), the distributed one over HTTP and the shared Redis
 * (adapters/remote.ts). Tests fill them with fakes.
 */
import type { PricedBasket, PromotionEvaluation } from '../../../subgraphs/promotions/api.ts';
import type { Deadline } from './resilience.ts';

export type { PricedBasket, PromotionEvaluation };

/** A catalog product and its static base price in the quote's currency. */
export interface CatalogEntry {
  sku: string;
  name: string;
  category: string;
  inventoryLevel: number;
  /** Undefined when the product has no price in that currency. */
  basePrice?: number;
}

/** The spec's PriceResponse, as far as the quote needs it. */
export interface Price {
  sku: string;
  basePrice: number;
  dynamicPrice: number;
  currency: string;
  appliedModifiers: readonly string[];
}

/** The spec's cache key: sku + region + customerSegment. */
export interface PriceKey {
  sku: string;
  region: string;
  customerSegment: string;
}

/** The spec's PriceContext. */
export interface PriceContext extends PriceKey {
  currency: string;
  inventoryLevel: number;
}

export interface CatalogPort {
  /** In the order asked; undefined for an unknown SKU. One round trip however many SKUs. */
  lookup(skus: readonly string[], currency: string): Promise<(CatalogEntry | undefined)[]>;
}

export interface PriceCachePort {
  /**
   * Fresh (at most 60 s old) prices, in key order. One round trip. Absent when the pricing port
   * reads the cache itself before computing (in process), so the edge does not read it twice.
   */
  fresh?(keys: readonly PriceKey[]): Promise<(Price | undefined)[]>;
  /** Last-known prices, kept long after the fresh entry expired (pricing behaviour 8). */
  lastKnown(keys: readonly PriceKey[]): Promise<(Price | undefined)[]>;
}

/** A live answer for one line: the price, whether pricing served it from its cache, or why not. */
export type LivePrice = { price: Price; cached: boolean } | { error: string };

export interface PricingPort {
  /** Calculates prices (pricing emits PriceCalculated for each miss), in context order. */
  calculate(contexts: readonly PriceContext[], deadline: Deadline): Promise<LivePrice[]>;
}

export interface PromotionsPort {
  evaluate(basket: PricedBasket, deadline: Deadline): Promise<PromotionEvaluation>;
}

export interface QuotePorts {
  catalog: CatalogPort;
  cache: PriceCachePort;
  pricing: PricingPort;
  promotions: PromotionsPort;
}
