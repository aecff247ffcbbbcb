import { allocateInto, percentOf } from '../cents.ts';
import {
  type ActionType,
  eligibleWeights,
  inBasket,
  percentPart,
  targetOf,
  targetText,
  unitsOf,
} from './action.ts';

/**
 * QUANTITY_TIER_DISCOUNT: the more units of `target_category` (of the cart when none), the
 * larger the percentage: the highest tier whose `min_quantity` the units reach applies, to what
 * is left of those lines. Tiers must be listed by increasing `min_quantity`.
 */
export const quantityTiers: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'tiers', 'target_category']);
    const target = targetOf(o, at, check, false);
    const { eligible } = target;
    const list = check.array(o.tiers, `${at}/tiers`, 1, 20);
    if (!list) return undefined;
    const tiers: { min: number; part: number }[] = [];
    list.forEach((t, i) => {
      const p = `${at}/tiers/${i}`;
      const tier = check.object(t, p);
      if (!tier) return;
      check.onlyKeys(tier, p, ['min_quantity', 'value']);
      const min = check.integer(tier.min_quantity, `${p}/min_quantity`, 1, 1_000_000);
      const part = percentPart(tier.value, `${p}/value`, check);
      const previous = tiers[tiers.length - 1];
      if (min !== undefined && previous && min <= previous.min)
        check.fail(`${p}/min_quantity`, 'must be greater than the previous tier’s');
      if (min !== undefined && part !== undefined) tiers.push({ min, part });
    });
    if (tiers.length !== list.length) return undefined;
    const highestFirst = [...tiers].reverse();
    return {
      type: 'QUANTITY_TIER_DISCOUNT',
      apply(b, remaining, out) {
        if (!inBasket(b, target)) return false;
        const units = unitsOf(b, eligible);
        const tier = highestFirst.find((t) => units >= t.min);
        if (!tier) return false;
        const discount = percentOf(eligibleWeights(b, remaining, eligible), tier.part);
        if (discount === 0) return false;
        allocateInto(discount, b.scratch, out);
        return true;
      },
      miss: (b) =>
        `${unitsOf(b, eligible)} unit(s) ${targetText(o)}; the first tier starts at ${tiers[0]?.min}`,
    };
  },
};
