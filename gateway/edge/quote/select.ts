import type { PriceSource } from '../../../lib/quote-token/index.ts';
import type { SourcedPrice } from '../../../subgraphs/promotions/quote/assemble.ts';
import type { CatalogEntry, LivePrice, Price } from './ports.ts';

export type { SourcedPrice };

const from = (p: Price, source: PriceSource): SourcedPrice => ({
  basePrice: p.basePrice,
  unitPrice: p.dynamicPrice,
  appliedModifiers: [...p.appliedModifiers],
  source,
});

/**
 * A cached entry is keyed without currency (pricing behaviour 1), so one priced in another
 * currency is not this line's price: the quote treats it as a miss rather than relabel money.
 */
export const usable = (p: Price | undefined, currency: string): Price | undefined =>
  p && p.currency === currency ? p : undefined;

/**
 * Pricing behaviour 8, for one line: the fresh cached price, else the live one, else the
 * last-known one, else the catalog's static base price (without modifiers). Undefined only
 * when the catalog has no price either.
 */
export function selectPrice(
  currency: string,
  found: { fresh?: Price; live?: LivePrice; lastKnown?: Price; entry: CatalogEntry },
): SourcedPrice | undefined {
  const fresh = usable(found.fresh, currency);
  if (fresh) return from(fresh, 'cache');
  const live = found.live && 'price' in found.live ? found.live : undefined;
  if (live && usable(live.price, currency)) return from(live.price, live.cached ? 'cache' : 'live');
  const lastKnown = usable(found.lastKnown, currency);
  if (lastKnown) return from(lastKnown, 'last_known');
  const base = found.entry.basePrice;
  if (base === undefined) return undefined;
  return { basePrice: base, unitPrice: base, appliedModifiers: [], source: 'static' };
}
