import { exactText } from '../../../lib/json/exact-number.ts';
import { parseCents } from './cents.ts';
import { BasketInvalid, type Violation } from './errors.ts';
import type { PricedBasket } from './shapes.ts';

/** A basket line in cents, as the rules see it. */
export interface Line {
  readonly index: number;
  readonly sku: string;
  readonly category: string;
  readonly quantity: number;
  readonly unitCents: number;
  readonly totalCents: number;
}

/**
 * The priced basket with its facts computed once, so that each of a thousand rules reads a
 * field or a Set instead of walking the lines again.
 */
export interface Basket {
  readonly currency: string;
  readonly customerId?: string;
  readonly segment?: string;
  /** Normalised coupon codes, deduplicated, in the order given. */
  readonly coupons: readonly string[];
  readonly couponSet: ReadonlySet<string>;
  readonly lines: readonly Line[];
  readonly subtotalCents: number;
  readonly totalQuantity: number;
  readonly categories: ReadonlySet<string>;
  readonly skus: ReadonlySet<string>;
  /** Working array of one slot per line that actions reuse (see eligibleWeights). */
  readonly scratch: number[];
  /** Facts as explanations show them, computed once per basket (many rules fail on the same fact). */
  readonly shown: Map<string, { value: unknown; text: string }>;
}

/** Coupon codes are matched case-insensitively: `welcome10` is `WELCOME10`. */
export const normaliseCoupon = (code: string): string => code.trim().toUpperCase();

/**
 * From a basket that passed the OpenAPI contract to the evaluated form. Checks what JSON
 * Schema cannot say exactly: at most 2 decimals on amounts.
 */
export function toBasket(input: PricedBasket): Basket {
  const errors: Violation[] = [];
  const lines: Line[] = [];
  let subtotalCents = 0;
  let totalQuantity = 0;
  const categories = new Set<string>();
  const skus = new Set<string>();
  input.lines.forEach((l, index) => {
    // As written in the JSON text when the REST body was parsed strictly: 19.990000000000000001
    // has more than 2 decimals even though its nearest double prints as 19.99.
    const unitCents = parseCents(exactText(l, 'unitPrice', l.unitPrice));
    if (unitCents === undefined || unitCents < 0)
      errors.push({
        pointer: `/lines/${index}/unitPrice`,
        message: 'must be an amount ≥ 0 with at most 2 decimals',
      });
    let totalCents = (unitCents ?? 0) * l.quantity;
    if (l.lineTotal !== undefined) {
      const given = parseCents(exactText(l, 'lineTotal', l.lineTotal));
      if (given === undefined || given < 0)
        errors.push({
          pointer: `/lines/${index}/lineTotal`,
          message: 'must be an amount ≥ 0 with at most 2 decimals',
        });
      else totalCents = given;
    }
    lines.push({
      index,
      sku: l.sku,
      category: l.category,
      quantity: l.quantity,
      unitCents: unitCents ?? 0,
      totalCents,
    });
    subtotalCents += totalCents;
    totalQuantity += l.quantity;
    categories.add(l.category);
    skus.add(l.sku);
  });
  if (errors.length > 0) throw new BasketInvalid(errors);
  const coupons = [...new Set((input.coupons ?? []).map(normaliseCoupon))];
  return {
    currency: input.currency,
    ...(input.customer?.id !== undefined ? { customerId: input.customer.id } : {}),
    ...(input.customer?.segment !== undefined ? { segment: input.customer.segment } : {}),
    coupons,
    couponSet: new Set(coupons),
    lines,
    subtotalCents,
    totalQuantity,
    categories,
    skus,
    scratch: new Array<number>(lines.length).fill(0),
    shown: new Map(),
  };
}
