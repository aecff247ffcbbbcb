import type { Basket } from './basket.ts';

/**
 * The facts a condition may test, all read from the priced basket (never the catalog).
 * `kind` decides which operators and operands are allowed (operators.ts).
 */
export type FactKind = 'items' | 'count' | 'money' | 'text' | 'codes';

export interface Fact {
  readonly kind: FactKind;
  /** What an explanation shows as the basket's value. */
  readonly describe: (b: Basket) => unknown;
}

const shown = <T>(values: Iterable<T>): T[] => [...values].slice(0, 20);

export const FACTS: Readonly<Record<string, Fact>> = {
  'cart.items': {
    kind: 'items',
    describe: (b) => ({ categories: shown(b.categories), skus: shown(b.skus) }),
  },
  'cart.total_quantity': { kind: 'count', describe: (b) => b.totalQuantity },
  'cart.subtotal': { kind: 'money', describe: (b) => b.subtotalCents / 100 },
  'cart.currency': { kind: 'text', describe: (b) => b.currency },
  'customer.id': { kind: 'text', describe: (b) => b.customerId ?? null },
  'customer.segment': { kind: 'text', describe: (b) => b.segment ?? null },
  'coupon.codes': { kind: 'codes', describe: (b) => b.coupons },
};

/** Readers for the scalar facts, so a compiled condition reads one field. */
export const numberOf: Readonly<Record<string, (b: Basket) => number>> = {
  'cart.total_quantity': (b) => b.totalQuantity,
  'cart.subtotal': (b) => b.subtotalCents,
};

export const textOf: Readonly<Record<string, (b: Basket) => string | undefined>> = {
  'cart.currency': (b) => b.currency,
  'customer.id': (b) => b.customerId,
  'customer.segment': (b) => b.segment,
};
