import { centsOf } from '../../../lib/money.ts';
import type { QuotedCart } from './pricing.ts';

/**
 * Items repeated across a session's lines (one product on two line items: UCP and ACP line items
 * have their own ids, and neither standard forbids it; platforms send them, for example to probe
 * fulfilment grouping). The cart quote takes each SKU once, so a session's items are quoted with
 * one line per SKU, its quantity the lines' sum (`mergeRepeats`), and the quoted line is spread
 * back over the items it stands for (`spreadQuote`): the session's totals are then exactly the
 * cart quote's for the same cart with each SKU once. Pure.
 */

/** The cart quote's lines, one per SKU in first-seen order, and the item indexes each stands for. */
export interface MergedLines {
  readonly lines: readonly { readonly sku: string; readonly quantity: number }[];
  readonly groups: readonly (readonly number[])[];
}

/** `indexes`: the items to quote; `skuOf(i)`: item i's SKU; `quantityOf(i)`: its quantity. */
export function mergeRepeats(
  indexes: readonly number[],
  skuOf: (item: number) => string,
  quantityOf: (item: number) => number,
): MergedLines {
  const at = new Map<string, number>();
  const lines: { sku: string; quantity: number }[] = [];
  const groups: number[][] = [];
  for (const i of indexes) {
    const sku = skuOf(i);
    const j = at.get(sku);
    if (j === undefined) {
      at.set(sku, lines.length);
      lines.push({ sku, quantity: quantityOf(i) });
      groups.push([i]);
    } else {
      (lines[j] as { quantity: number }).quantity += quantityOf(i);
      (groups[j] as number[]).push(i);
    }
  }
  return { lines, groups };
}

/**
 * `total` cents split in proportion to `weights` (positive integers), by largest remainder: the
 * parts are whole cents and add up to `total` exactly; ties go to the earlier part. Hand-written:
 * ten lines, and the libraries that do it (dinero.js's allocate) bring a money type this code
 * base does not use.
 */
export function splitCents(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (weights.length <= 1 || sum <= 0) return weights.map((_, k) => (k === 0 ? total : 0));
  const sign = total < 0 ? -1 : 1;
  const abs = Math.abs(total);
  const parts = weights.map((w) => Math.floor((abs * w) / sum));
  let left = abs - parts.reduce((a, b) => a + b, 0);
  const order = weights
    .map((w, k) => ({ k, rest: (abs * w) % sum }))
    .sort((a, b) => b.rest - a.rest || a.k - b.k);
  for (const { k } of order) {
    if (left <= 0) break;
    parts[k] = (parts[k] as number) + 1;
    left--;
  }
  return parts.map((p) => sign * p);
}

const amount = (cents: number): number => cents / 100;

/**
 * The quote of merged lines (`merged.lines`, in order) as a quote with one line per item: each
 * item's share of its SKU's line is in proportion to its quantity (the base and each promotion's
 * allocation split by largest remainder, so every sum is the quote's to the cent; a line's
 * discount is the sum of its shares of the allocations when they make up the SKU's discount, as
 * they do, else its own share of it), its stock the SKU's. Allocations carry the spread line they
 * belong to (`line`). The items' order is `quotedItems` (the flattened groups).
 */
export function spreadQuote(
  quoted: QuotedCart,
  merged: MergedLines,
  quantityOf: (item: number) => number,
): { quoted: QuotedCart; quotedItems: number[] } {
  if (merged.groups.every((g) => g.length === 1))
    return { quoted, quotedItems: merged.groups.map((g) => g[0] as number) };
  const skuLine = new Map(merged.lines.map((l, j) => [l.sku, j]));
  const weightsOf = merged.groups.map((g) => g.map(quantityOf));
  // Each allocation split over the spread lines of its SKU (k: the item's place in its group).
  const shares = quoted.promotions.applied.map((a) =>
    a.allocations.map((x) => {
      const j = skuLine.get(x.sku);
      return j === undefined ? null : { j, parts: splitCents(centsOf(x.amount), weightsOf[j] ?? []) };
    }),
  );
  const allShares = shares.flat();
  const lines: QuotedCart['lines'][number][] = [];
  const levels: (number | undefined)[] = [];
  const quotedItems: number[] = [];
  const firstAt: number[] = [];
  merged.groups.forEach((group, j) => {
    const l = quoted.lines[j];
    if (!l) return;
    const weights = weightsOf[j] ?? [];
    const base = splitCents(centsOf(l.lineTotal), weights);
    const mine = allShares.filter((x) => x?.j === j);
    const allocated = weights.map((_, k) => mine.reduce((sum, x) => sum + (x?.parts[k] as number), 0));
    const whole = allocated.reduce((a, b) => a + b, 0) === centsOf(l.discount);
    const discount = whole ? allocated : splitCents(centsOf(l.discount), weights);
    firstAt.push(lines.length);
    group.forEach((item, k) => {
      quotedItems.push(item);
      lines.push({
        ...l,
        quantity: weights[k] as number,
        lineTotal: amount(base[k] as number),
        discount: amount(discount[k] as number),
        total: amount((base[k] as number) - (discount[k] as number)),
      });
      levels.push(quoted.inventoryLevels?.[j]);
    });
  });
  const applied = quoted.promotions.applied.map((a, p) => ({
    ...a,
    allocations: a.allocations.flatMap((x, n) => {
      const s = shares[p]?.[n];
      if (!s) return [x];
      return s.parts.map((cents, k) => ({
        sku: x.sku,
        amount: amount(cents),
        line: (firstAt[s.j] as number) + k,
      }));
    }),
  }));
  return {
    quoted: {
      ...quoted,
      lines,
      promotions: { ...quoted.promotions, applied },
      ...(quoted.inventoryLevels ? { inventoryLevels: levels as number[] } : {}),
    },
    quotedItems,
  };
}
