/** Fake ports for the quote's composition tests: each records its calls and can fail or hang. */

import type {
  CatalogEntry,
  LivePrice,
  Price,
  PriceContext,
  PricedBasket,
  PriceKey,
  PromotionEvaluation,
  QuotePorts,
} from '../../gateway/edge/quote/ports.ts';
import { type Deadline, RefusedInput } from '../../gateway/edge/quote/resilience.ts';

export type Mode = 'ok' | 'fail' | 'hang' | 'refuse';

const act = async <T>(mode: Mode, value: () => T, deadline?: Deadline): Promise<T> => {
  if (mode === 'fail') throw new Error('down');
  if (mode === 'refuse') throw new RefusedInput('refused this input');
  if (mode === 'hang') {
    return new Promise<T>((_, reject) =>
      deadline?.signal.addEventListener('abort', () => reject(new Error('aborted'))),
    );
  }
  return value();
};

const keyText = (k: PriceKey) => `${k.sku}|${k.region}|${k.customerSegment}`;

export function catalogOf(n: number, currency = 'USD'): CatalogEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    sku: `SKU-TST-${String(i + 1).padStart(6, '0')}`,
    name: `Item ${i + 1}`,
    category: i % 2 === 0 ? 'tools' : 'toys',
    inventoryLevel: 50,
    ...(currency ? { basePrice: 10 + i } : {}),
  }));
}

/** Pricing's answer for a context: base × 1.1 (a stand-in modifier), 2 decimals. */
export const livePrice = (c: PriceContext, base: number): Price => ({
  sku: c.sku,
  basePrice: base,
  dynamicPrice: Math.round(base * 110) / 100,
  currency: c.currency,
  appliedModifiers: ['SCARCITY_SURCHARGE_15'],
});

export function fakePorts(entries: CatalogEntry[]) {
  const state = {
    catalog: 'ok' as Mode,
    cache: 'ok' as Mode,
    pricing: 'ok' as Mode,
    promotions: 'ok' as Mode,
    fresh: new Map<string, Price>(),
    lastKnown: new Map<string, Price>(),
    pricingCalls: [] as PriceContext[][],
    baskets: [] as PricedBasket[],
    /** Percentage off every line, when set. */
    percentOff: 0,
  };
  const bySku = new Map(entries.map((e) => [e.sku, e]));
  const ports: QuotePorts = {
    catalog: {
      lookup: (skus) => act(state.catalog, () => skus.map((s) => bySku.get(s))),
    },
    cache: {
      fresh: (keys) => act(state.cache, () => keys.map((k) => state.fresh.get(keyText(k)))),
      lastKnown: (keys) => act(state.cache, () => keys.map((k) => state.lastKnown.get(keyText(k)))),
    },
    pricing: {
      calculate: (contexts, deadline) => {
        state.pricingCalls.push([...contexts]);
        return act(
          state.pricing,
          () =>
            contexts.map((c): LivePrice => {
              const p = livePrice(c, bySku.get(c.sku)?.basePrice ?? 0);
              state.lastKnown.set(keyText(c), p);
              return { price: p, cached: false };
            }),
          deadline,
        );
      },
    },
    promotions: {
      evaluate: (basket, deadline) => {
        state.baskets.push(basket);
        return act(state.promotions, () => evaluateFake(basket, state.percentOff), deadline);
      },
    },
  };
  return { ports, state, keyText };
}

function evaluateFake(basket: PricedBasket, percentOff: number): PromotionEvaluation {
  const cents = (v: unknown) => Math.round(Number(v) * 100);
  const lines = basket.lines.map((l, lineIndex) => {
    const total = cents(l.lineTotal);
    const discount = Math.floor((total * percentOff) / 100);
    return {
      lineIndex,
      sku: l.sku,
      lineTotal: total / 100,
      discount: discount / 100,
      total: (total - discount) / 100,
    };
  });
  const discount = lines.reduce((n, l) => n + cents(l.discount), 0);
  const subtotal = lines.reduce((n, l) => n + cents(l.lineTotal), 0);
  return {
    currency: basket.currency,
    subtotal: subtotal / 100,
    applied:
      percentOff > 0
        ? [
            {
              promotionId: 'P-OFF',
              name: `${percentOff}% off`,
              priority: 1,
              actions: ['PERCENTAGE_DISCOUNT_CART'],
              amount: discount / 100,
              allocations: lines.map((l) => ({ lineIndex: l.lineIndex, sku: l.sku, amount: l.discount })),
            },
          ]
        : [],
    notApplied:
      percentOff > 0
        ? []
        : [{ promotionId: 'P-OFF', name: 'off', reason: 'CONDITION_FAILED', detail: 'never in this test' }],
    coupons: [],
    lines,
    discountTotal: discount / 100,
    total: (subtotal - discount) / 100,
  };
}
