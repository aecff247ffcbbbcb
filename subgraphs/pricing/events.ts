import type { Decimal } from 'decimal.js';
import type { EventBus } from '../../lib/events/bus.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { toNumber2 } from '../../lib/money.ts';
import type { BasePriceChange } from './catalog/catalog.ts';
import type { PriceContext, PriceResponse } from './domain/types.ts';

/**
 * `data` of a PriceCalculated CloudEvent (schemas/events/price-calculated.json): the request
 * context that missed the cache and the response that was stored for it.
 */
export interface PriceCalculatedData extends PriceResponse {
  readonly region: string;
  readonly customerSegment: string;
  readonly inventoryLevel: number;
}

/** `data` of a BasePriceChanged CloudEvent (schemas/events/base-price-changed.json). */
export interface BasePriceChangedData {
  readonly sku: string;
  readonly currency: string;
  /** null when the SKU had no price in this currency before. */
  readonly previousAmount: number | null;
  readonly amount: number;
  readonly changedAt: string;
  /** `sub` of the caller who made the change. */
  readonly changedBy: string | null;
}

/**
 * Written field by field: a clone that is then extended (`{ ...response, region, … }`) gets a
 * hidden class of its own in V8 for every event (docs/performance.md, "Fifth pass").
 */
export const priceCalculated = (ctx: PriceContext, response: PriceResponse): PriceCalculatedData => ({
  sku: response.sku,
  basePrice: response.basePrice,
  dynamicPrice: response.dynamicPrice,
  currency: response.currency,
  appliedModifiers: response.appliedModifiers,
  calculatedAt: response.calculatedAt,
  region: ctx.region,
  customerSegment: ctx.customerSegment,
  inventoryLevel: ctx.inventoryLevel,
});

export function basePriceChanged(
  change: BasePriceChange,
  changedAt: Date,
  changedBy: string | undefined,
): BasePriceChangedData {
  const n = (d: Decimal) => toNumber2(d);
  return {
    sku: change.sku,
    currency: change.currency,
    previousAmount: change.previousAmount ? n(change.previousAmount) : null,
    amount: n(change.amount),
    changedAt: changedAt.toISOString(),
    changedBy: changedBy ?? null,
  };
}

export const publishPriceCalculated = (bus: EventBus, data: PriceCalculatedData) =>
  bus.publish(EventTypes.PriceCalculated, data, data.sku);

export const publishBasePriceChanged = (bus: EventBus, data: BasePriceChangedData) =>
  bus.publish(EventTypes.BasePriceChanged, data, data.sku);

/** `data` of a CatalogChanged CloudEvent (schemas/events/catalog-changed.json). */
export interface CatalogChangedData {
  readonly importId: string;
  readonly changedSkus: readonly string[];
  readonly removedSkus: readonly string[];
  readonly changedAt: string;
}

/** SKUs an event holds at most; a larger change is published as several events. */
export const CATALOG_CHANGED_MAX_SKUS = 1000;

/** The change as CatalogChanged events of at most 1,000 SKUs each. */
export async function publishCatalogChanged(
  bus: EventBus,
  change: { importId: string; changedSkus: readonly string[]; removedSkus: readonly string[]; at: Date },
): Promise<void> {
  const all = [
    ...change.changedSkus.map((sku) => ({ sku, removed: false })),
    ...change.removedSkus.map((sku) => ({ sku, removed: true })),
  ];
  for (let i = 0; i < all.length; i += CATALOG_CHANGED_MAX_SKUS) {
    const part = all.slice(i, i + CATALOG_CHANGED_MAX_SKUS);
    const data: CatalogChangedData = {
      importId: change.importId,
      changedSkus: part.filter((p) => !p.removed).map((p) => p.sku),
      removedSkus: part.filter((p) => p.removed).map((p) => p.sku),
      changedAt: change.at.toISOString(),
    };
    await bus.publish(EventTypes.CatalogChanged, data, change.importId);
  }
}

/** Every SKU a CatalogChanged event names (changed or removed); [] for a malformed one. */
export function skusOfCatalogChanged(data: unknown): string[] {
  const d = data as Partial<CatalogChangedData> | undefined;
  const list = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
  return [...list(d?.changedSkus), ...list(d?.removedSkus)];
}
