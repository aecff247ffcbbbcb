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
