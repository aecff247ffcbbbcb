import type { Decimal } from 'decimal.js';
import { money, round2 } from '../../../lib/money.ts';
import type { ModifierCode } from './types.ts';

/** Behaviour 3: thresholds on inventoryLevel (exclusive: 10 and 500 themselves change nothing). */
export const SCARCITY_BELOW = 10;
export const OVERSTOCK_ABOVE = 500;
export const VIP_SEGMENT = 'VIP';

const SCARCITY = money('1.15');
const OVERSTOCK = money('0.90');
const VIP = money('0.95');

export interface ModifiedPrice {
  /** The adjusted price, rounded half-up to 2 decimals once, at the end (behaviour 5). */
  readonly dynamicPrice: Decimal;
  /** Codes in the order the modifiers were applied; empty when none. */
  readonly appliedModifiers: readonly ModifierCode[];
}

/**
 * The spec's behaviours 3 to 5 as one pure function: inventory modifier first (scarcity or
 * overstock, never both), then the VIP discount on top, in exact decimal arithmetic, rounded
 * once so that 19.99 × 1.15 is 22.99 and no intermediate rounding drifts a cent.
 */
export function applyModifiers(
  basePrice: Decimal,
  inventoryLevel: number,
  customerSegment: string,
): ModifiedPrice {
  let price = basePrice;
  const applied: ModifierCode[] = [];
  if (inventoryLevel < SCARCITY_BELOW) {
    price = price.times(SCARCITY);
    applied.push('SCARCITY_SURCHARGE_15');
  } else if (inventoryLevel > OVERSTOCK_ABOVE) {
    price = price.times(OVERSTOCK);
    applied.push('OVERSTOCK_DISCOUNT_10');
  }
  if (customerSegment === VIP_SEGMENT) {
    price = price.times(VIP);
    applied.push('VIP_SEGMENT_DISCOUNT');
  }
  return { dynamicPrice: round2(price), appliedModifiers: applied };
}
