import { percentOf } from '../cents.ts';
import { type ActionType, inBasket, percentPart, targetOf, targetText, unitsOf } from './action.ts';

/**
 * BUY_X_GET_Y: for every `buy_quantity` + `get_quantity` units of `target_category` (of the
 * cart when none), `get_quantity` units get `value` % off (100, free, when not given). The
 * discounted units are the cheapest ones of the basket, as most shops do.
 */
export const buyXGetY: ActionType = {
  compile(o, at, check) {
    check.onlyKeys(o, at, ['type', 'buy_quantity', 'get_quantity', 'value', 'target_category']);
    const buy = check.integer(o.buy_quantity, `${at}/buy_quantity`, 1, 1000);
    const get = check.integer(o.get_quantity, `${at}/get_quantity`, 1, 1000);
    const part = o.value === undefined ? 1_000_000 : percentPart(o.value, `${at}/value`, check);
    const target = targetOf(o, at, check, false);
    if (buy === undefined || get === undefined || part === undefined) return undefined;
    const { eligible } = target;
    return {
      type: 'BUY_X_GET_Y',
      apply(b, remaining, out) {
        if (!inBasket(b, target)) return false;
        const lines = b.lines.filter((l) => eligible(l) && (remaining[l.index] ?? 0) > 0);
        const units = lines.reduce((n, l) => n + l.quantity, 0);
        let free = Math.floor(units / (buy + get)) * get;
        if (free === 0) return false;
        lines.sort((x, y) => x.unitCents - y.unitCents || x.index - y.index);
        let any = false;
        for (const l of lines) {
          if (free === 0) break;
          const n = Math.min(free, l.quantity);
          free -= n;
          const share = Math.min(percentOf(l.unitCents * n, part), remaining[l.index] ?? 0);
          out[l.index] = share;
          if (share > 0) any = true;
        }
        return any;
      },
      miss: (b) =>
        `${unitsOf(b, eligible)} unit(s) ${targetText(o)}; needs ${buy + get} for ${get} discounted`,
    };
  },
};
