import type { ActionType } from './action.ts';
import { buyXGetY } from './buy-x-get-y.ts';
import { cartPercentage } from './cart-percentage.ts';
import { categoryPercentage } from './category-percentage.ts';
import { cheapestItem } from './cheapest-item.ts';
import { fixedAmount } from './fixed-amount.ts';
import { quantityTiers } from './quantity-tiers.ts';

export type { CompiledAction } from './action.ts';

/** Action types of rule format 2.1, by the `type` a rule document names. */
export const ACTIONS: Readonly<Record<string, ActionType>> = {
  PERCENTAGE_DISCOUNT_CHEAPEST_ITEM: cheapestItem,
  PERCENTAGE_DISCOUNT_CATEGORY: categoryPercentage,
  PERCENTAGE_DISCOUNT_CART: cartPercentage,
  FIXED_AMOUNT_DISCOUNT: fixedAmount,
  BUY_X_GET_Y: buyXGetY,
  QUANTITY_TIER_DISCOUNT: quantityTiers,
};
