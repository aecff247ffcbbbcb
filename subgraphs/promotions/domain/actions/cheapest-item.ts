import { percentOf } from '../cents.ts';
import { type ActionType, percentPart, targetOf, targetText } from './action.ts';

/**
 * PERCENTAGE_DISCOUNT_CHEAPEST_ITEM (the spec's sample): `value` % off one unit, the cheapest
 * of `target_category` (of the cart when no category is given); 100 makes it free. Ties go to
 * the earlier line.
 */
export const cheapestItem: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'value', 'target_category']);
    const part = percentPart(o.value, `${at}/value`, check);
    const eligible = targetOf(o, at, check, false);
    if (part === undefined) return undefined;
    return {
      type: 'PERCENTAGE_DISCOUNT_CHEAPEST_ITEM',
      apply(b, remaining, out) {
        let best = -1;
        for (const l of b.lines) {
          if (!eligible(l) || (remaining[l.index] ?? 0) <= 0) continue;
          if (best < 0 || l.unitCents < (b.lines[best]?.unitCents ?? 0)) best = l.index;
        }
        const line = b.lines[best];
        if (line) out[best] = Math.min(percentOf(line.unitCents, part), remaining[best] ?? 0);
      },
      miss: () => `no item ${targetText(o)} left to discount`,
    };
  },
};
