import { centsOf } from '../../../lib/money.ts';
import {
  type CodeRejection,
  EMPTY_TOTALS,
  type RejectedCode,
  type SessionDiscount,
  type SessionItem,
  type SessionLine,
  type SessionPricing,
  type SessionProblem,
} from './session.ts';

/**
 * A consolidated cart quote (GET /cart/quote's reply and its signed token), as far as a session
 * needs it. Structural, so this core does not import the edge: the gateway hands it the quote
 * service's answer. Amounts are the quote's 2-decimal numbers; they become cents here.
 */
export interface QuotedCart {
  readonly lines: readonly {
    readonly sku: string;
    readonly name: string;
    readonly quantity: number;
    readonly unitPrice: number;
    readonly lineTotal: number;
    readonly discount: number;
    readonly total: number;
    /** Where the price came from: `last_known` and `static` are the edge's fallbacks. */
    readonly source?: string;
  }[];
  readonly subtotal: number;
  readonly discountTotal: number;
  readonly total: number;
  readonly promotions: {
    readonly status: 'evaluated' | 'unavailable';
    readonly applied: readonly {
      readonly promotionId: string;
      readonly name: string;
      readonly couponCode?: string;
      readonly amount: number;
      /** `line`: the quote's line it belongs to, where a SKU has several (./repeats.ts). */
      readonly allocations: readonly {
        readonly sku: string;
        readonly amount: number;
        readonly line?: number;
      }[];
    }[];
    readonly notApplied: readonly {
      readonly promotionId: string;
      readonly reason: string;
      readonly detail: string;
    }[];
    readonly coupons: readonly {
      readonly code: string;
      readonly status: string;
      readonly promotionId?: string;
    }[];
  };
  readonly quote: { readonly id: string; readonly expiresAt: string; readonly token: string };
  /**
   * Units in stock of each line's product (the catalog's `inventoryLevel`, the one the line was
   * priced with), in line order. Absent: stock is not known, and not checked.
   */
  readonly inventoryLevels?: readonly number[];
}

/** A SKU the quote could not take (unknown to the catalog, or without a price in the currency). */
export interface UnquotedItem {
  readonly item: number;
  readonly kind: 'unknown_sku' | 'unpriced';
  readonly message: string;
}

const unpricedLine = (it: SessionItem, item: number): SessionLine => ({
  item,
  unpriced: true,
  sku: it.sku,
  name: it.sku,
  quantity: it.quantity,
  unitCents: 0,
  baseCents: 0,
  discountCents: 0,
  totalCents: 0,
});

/**
 * Lines short of stock: a line is out of stock when the quantity asked of its product (its own,
 * plus that of every other priced line of the same SKU) is above the product's units in stock
 * (the catalog's `inventoryLevel`; 0 means none at all). `levels[i]` is the stock of
 * `lines[i]`'s product, undefined when unknown (not checked). Unpriced lines are left out: their
 * own message says why they cannot be bought. Pure.
 */
export function stockProblems(
  lines: readonly Pick<SessionLine, 'item' | 'sku' | 'name' | 'quantity' | 'unpriced'>[],
  levels: readonly (number | undefined)[],
): SessionProblem[] {
  const asked = new Map<string, { units: number; lines: number }>();
  for (const l of lines) {
    if (l.unpriced) continue;
    const a = asked.get(l.sku) ?? { units: 0, lines: 0 };
    asked.set(l.sku, { units: a.units + l.quantity, lines: a.lines + 1 });
  }
  return lines.flatMap((l, i) => {
    const level = levels[i];
    const a = asked.get(l.sku) ?? { units: l.quantity, lines: 1 };
    if (l.unpriced || level === undefined || a.units <= level) return [];
    const what = l.name === l.sku ? l.sku : `${l.name} (${l.sku})`;
    const across = a.lines > 1 ? ` across ${a.lines} lines` : '';
    const message =
      level <= 0
        ? `${what} is out of stock`
        : `insufficient stock for ${what}: ${level} available, ${a.units} asked${across}; lower the quantity`;
    return [{ kind: 'out_of_stock' as const, item: l.item, message, blocking: true }];
  });
}

/** Codes are matched as promotions match them: trimmed, upper case. */
export const normalizeCode = (code: string): string => code.trim().toUpperCase();

/** Promotions' reason a coupon's rule gave nothing → the discount extension's reason. */
const REJECTION_OF: Readonly<Record<string, CodeRejection>> = {
  EXPIRED: 'expired',
  REDEMPTION_LIMIT_REACHED: 'usage_limit_reached',
  EXCLUSIVE_CONFLICT: 'combination_disallowed',
  STOPPED_BY_HIGHER_PRIORITY: 'combination_disallowed',
  CONDITION_FAILED: 'minimum_not_met',
  NO_ELIGIBLE_ITEMS: 'minimum_not_met',
};

/** Each requested code's fate: applied (absent here) or rejected with promotions' own reason. */
export function rejectedCodes(codes: readonly string[], q: QuotedCart['promotions']): RejectedCode[] {
  const out: RejectedCode[] = [];
  const seen = new Set<string>();
  codes.forEach((code, index) => {
    const norm = normalizeCode(code);
    if (seen.has(norm)) {
      out.push({ index, code, reason: 'already_applied', message: `${code} was given more than once` });
      return;
    }
    seen.add(norm);
    if (q.status === 'unavailable') return; // reported once, as a problem (pricedSession)
    const result = q.coupons.find((c) => c.code === norm);
    if (!result || result.status === 'UNKNOWN') {
      out.push({ index, code, reason: 'invalid', message: `${code} is not a known discount code` });
      return;
    }
    if (result.status === 'APPLIED') return;
    if (result.status === 'EXPIRED') {
      out.push({ index, code, reason: 'expired', message: `${code} has expired` });
      return;
    }
    const why = q.notApplied.find((n) => n.promotionId === result.promotionId);
    out.push({
      index,
      code,
      reason: (why && REJECTION_OF[why.reason]) ?? 'invalid',
      message: why ? `${code} does not apply: ${why.detail}` : `${code} does not apply to this cart`,
    });
  });
  return out;
}

/**
 * A session's pricing from a quote of its priceable items (`quotedItems[i]` is the item index of
 * the quote's line i) and the items that could not be quoted. Totals come from the quote itself,
 * so a session's total is GET /cart/quote's for the same cart, to the cent. Pure.
 */
export function pricedSession(
  items: readonly SessionItem[],
  codes: readonly string[],
  quotedItems: readonly number[],
  quoted: QuotedCart | null,
  unquoted: readonly UnquotedItem[],
): SessionPricing {
  const problems: SessionProblem[] = unquoted.map((u) => ({
    kind: u.kind,
    item: u.item,
    message: u.message,
    blocking: true,
  }));
  if (!quoted)
    return {
      lines: items.map(unpricedLine),
      discounts: [],
      rejected: [],
      problems,
      totals: EMPTY_TOTALS,
      quote: null,
    };

  // One line per item in the items' order: the quoted ones priced, the others at zero.
  const byItem = new Map(quotedItems.map((item, i) => [item, quoted.lines[i]]));
  const lines: SessionLine[] = items.map((it, item) => {
    const l = byItem.get(item);
    if (!l) return unpricedLine(it, item);
    const baseCents = centsOf(l.lineTotal);
    const discountCents = centsOf(l.discount);
    return {
      item,
      sku: l.sku,
      name: l.name,
      quantity: it.quantity,
      unitCents: centsOf(l.unitPrice),
      baseCents,
      discountCents,
      totalCents: baseCents - discountCents,
    };
  });
  const levelOf = new Map(quotedItems.map((item, i) => [item, quoted.inventoryLevels?.[i]]));
  problems.push(
    ...stockProblems(
      lines,
      lines.map((l) => levelOf.get(l.item)),
    ),
  );
  problems.sort((a, b) => (a.item ?? 0) - (b.item ?? 0));
  const lineOfSku = new Map(lines.flatMap((l, i) => (l.unpriced ? [] : [[l.sku, i] as const])));
  const discounts: SessionDiscount[] = quoted.promotions.applied.map((a) => ({
    promotionId: a.promotionId,
    name: a.name,
    code: a.couponCode ?? null,
    amountCents: centsOf(a.amount),
    allocations: a.allocations.flatMap((x) => {
      const line = x.line !== undefined ? quotedItems[x.line] : lineOfSku.get(x.sku);
      return line === undefined ? [] : [{ line, amountCents: centsOf(x.amount) }];
    }),
  }));
  const fallback = quoted.lines.filter((l) => l.source === 'last_known' || l.source === 'static');
  if (fallback.length > 0)
    problems.push({
      kind: 'fallback_prices',
      message: `pricing could not be reached: ${fallback.map((l) => l.sku).join(', ')} ${fallback.length === 1 ? 'is' : 'are'} priced at ${fallback.length === 1 ? 'its' : 'their'} last known or catalog price`,
      blocking: false,
    });
  if (quoted.promotions.status === 'unavailable')
    problems.push(
      codes.length > 0
        ? {
            kind: 'promotions_unavailable',
            message: 'discount codes cannot be checked right now; try again shortly',
            blocking: true,
          }
        : {
            kind: 'promotions_unavailable',
            message: 'promotions could not be evaluated; prices are shown without them',
            blocking: false,
          },
    );
  const baseCents = centsOf(quoted.subtotal);
  const discountCents = centsOf(quoted.discountTotal);
  return {
    lines,
    discounts,
    rejected: rejectedCodes(codes, quoted.promotions),
    problems,
    totals: {
      baseCents,
      discountCents,
      subtotalCents: baseCents - discountCents,
      totalCents: centsOf(quoted.total),
    },
    // Not the token: nothing reads it back, and it was ~1 KB of the ~2.2 KB stored session,
    // written twice per completion (docs/performance.md, "ACP", fourth pass).
    quote: { id: quoted.quote.id, expiresAt: quoted.quote.expiresAt },
  };
}
