import { allocateInto, percentOf } from '../cents.ts';
import { type ActionType, eligibleWeights, inBasket, percentPart, targetOf, targetText } from './action.ts';

/**
 * PERCENTAGE_DISCOUNT_CATEGORY: `value` % off what is left of the lines of `target_category`.
 * The percentage is taken of their sum, then allocated to the lines, so the discount is the
 * figure a shopper computes, not a sum of per-line roundings.
 */
export const categoryPercentage: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'value', 'target_category']);
    const part = percentPart(o.value, `${at}/value`, check);
    const target = targetOf(o, at, check, true);
    if (part === undefined) return undefined;
    return {
      type: 'PERCENTAGE_DISCOUNT_CATEGORY',
      apply(b, remaining, out) {
        if (!inBasket(b, target)) return false;
        const discount = percentOf(eligibleWeights(b, remaining, target.eligible), part);
        if (discount === 0) return false;
        allocateInto(discount, b.scratch, out);
        return true;
      },
      miss: () => `nothing ${targetText(o)} left to discount`,
    };
  },
};
