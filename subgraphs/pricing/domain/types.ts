/**
 * The spec's pricing shapes. PriceContext's JSON Schema (what the REST route validates with)
 * lives in schemas/openapi/pricing.yaml; these types mirror it for the TypeScript side.
 */
export interface PriceContext {
  readonly sku: string;
  readonly currency: string;
  readonly region: string;
  /** The value `VIP` has an effect; other values are allowed. */
  readonly customerSegment: string;
  /** Units in stock. */
  readonly inventoryLevel: number;
}

export const ModifierCodes = [
  'SCARCITY_SURCHARGE_15',
  'OVERSTOCK_DISCOUNT_10',
  'VIP_SEGMENT_DISCOUNT',
] as const;
export type ModifierCode = (typeof ModifierCodes)[number];

export interface PriceResponse {
  readonly sku: string;
  readonly basePrice: number;
  readonly dynamicPrice: number;
  readonly currency: string;
  readonly appliedModifiers: readonly ModifierCode[];
  readonly calculatedAt: string;
}

/** Behaviour 1: the cache key is sku + region + customerSegment (not currency, not inventory). */
export interface PriceKey {
  readonly sku: string;
  readonly region: string;
  readonly customerSegment: string;
}

export const priceKeyOf = (c: PriceKey): PriceKey => ({
  sku: c.sku,
  region: c.region,
  customerSegment: c.customerSegment,
});

/** Unambiguous text of a key's region and segment (any characters may occur in either). */
export const keyField = (k: PriceKey): string => JSON.stringify([k.region, k.customerSegment]);
export const keyText = (k: PriceKey): string => JSON.stringify([k.sku, k.region, k.customerSegment]);

/** A response as stored: the object and its exact serialisation, served unchanged on a HIT. */
export interface StoredPrice {
  readonly response: PriceResponse;
  readonly json: string;
  /** When the fresh entry it was read from expires (ms), where the cache records it. */
  readonly expiresAt?: number;
}

export const storedPrice = (response: PriceResponse): StoredPrice => ({
  response,
  json: JSON.stringify(response),
});
