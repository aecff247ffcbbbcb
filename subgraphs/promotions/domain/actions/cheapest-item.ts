import { percentOf } from '../cents.ts';
import { type ActionType, inBasket, percentPart, targetOf, targetText } from './action.ts';

/**
 * PERCENTAGE_DISCOUNT_CHEAPEST_ITEM (the spec's sample): `value` % off one unit, the cheapest
 * of `target_category` (of the cart when no category is given); 100 makes it free. Ties go to
 * the earlier line.
 */
export const cheapestItem: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'value', 'target_category']);
    const part = percentPart(o.value, `${at}/value`, check);
    const target = targetOf(o, at, check, false);
    if (part === undefined) return undefined;
    const { eligible } = target;
    return {
      type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM',
      apply(b, remaining, out) {
        if (!inBasket(b, target)) return false;
        let best: (typeof b.lines)[number] | undefined;
        for (const l of b.lines) {
          if (!eligible(l) || (remaining[l.index] ?? 0) <= 0) continue;
          if (!best || l.unitCents < best.unitCents) best = l;
        }
        if (!best) return false;
        const share = Math.min(percentOf(best.unitCents, part), remaining[best.index] ?? 0);
        out[best.index] = share;
        return share > 0;
      },
      miss: () => `no item ${targetText(o)} left to discount`,
    };
  },
};
