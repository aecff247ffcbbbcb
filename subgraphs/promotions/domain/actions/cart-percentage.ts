import { allocateInto, percentOf } from '../cents.ts';
import { type ActionType, percentPart } from './action.ts';

/** PERCENTAGE_DISCOUNT_CART: `value` % off what is left of the cart, allocated to the lines. */
export const cartPercentage: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'value']);
    const part = percentPart(o.value, `${at}/value`, check);
    if (part === undefined) return undefined;
    return {
      type: 'PERCENTAGE_DISCOUNT_CART',
      apply(_b, remaining, out) {
        let base = 0;
        for (let i = 0; i < remaining.length; i++) base += remaining[i] as number;
        const discount = percentOf(base, part);
        if (discount === 0) return false;
        allocateInto(discount, remaining, out);
        return true;
      },
    };
  },
};
