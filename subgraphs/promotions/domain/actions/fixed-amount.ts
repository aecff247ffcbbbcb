import { allocateInto } from '../cents.ts';
import { type ActionType, eligibleWeights, inBasket, targetOf, targetText } from './action.ts';

/**
 * FIXED_AMOUNT_DISCOUNT: `value` (an amount in `currency`) off the cart, or off the lines of
 * `target_category`, allocated in proportion to what is left of them; never more than that.
 */
export const fixedAmount: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'value', 'currency', 'target_category']);
    const cents = check.cents(o.value, `${at}/value`);
    if (cents === 0) check.fail(`${at}/value`, 'must be above 0');
    const currency = check.string(o.currency, `${at}/currency`, { min: 3, max: 3, pattern: /^[A-Z]{3}$/ });
    const target = targetOf(o, at, check, false);
    if (cents === undefined || currency === undefined) return undefined;
    return {
      type: 'FIXED_AMOUNT_DISCOUNT',
      currency,
      apply(b, remaining, out) {
        if (!inBasket(b, target)) return false;
        const discount = Math.min(cents, eligibleWeights(b, remaining, target.eligible));
        if (discount === 0) return false;
        allocateInto(discount, b.scratch, out);
        return true;
      },
      miss: () => `nothing ${targetText(o)} left to discount`,
    };
  },
};
