import { decodeJwt } from 'jose';
import { Problem } from '../../../lib/problem.ts';
import {
  pricedSession,
  type QuotedCart,
  type UnquotedItem,
} from '../../../subgraphs/procurement/checkout/pricing.ts';
import { mergeRepeats, spreadQuote } from '../../../subgraphs/procurement/checkout/repeats.ts';
import type { SessionItem, SessionPricing } from '../../../subgraphs/procurement/checkout/session.ts';
import { type CheckoutDeps, CheckoutUnavailable } from './types.ts';

/** The catalog's SKUs; any other item id is unknown without asking the catalog. */
export const SKU = /^SKU-[A-Z]{3}-\d{6}$/;
/** A code as the cart quote takes one (schemas/openapi/edge.yaml). */
const COUPON = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** A customer id as the cart quote takes one. */
const CUSTOMER = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
/** Quote attempts at most: unknown SKUs are found first, then SKUs without a price. */
const QUOTE_ROUNDS = 3;

/** The token is ours and was just signed: its payload's jti is the quote's id (not verified again). */
const quoteIdOf = (token: string): string => decodeJwt(token).jti ?? '';

export type Price = (
  items: readonly SessionItem[],
  codes: readonly string[],
  currency: string,
  region: string,
  agentId: string,
) => Promise<SessionPricing>;

/** A session's pricing: the cart quote's, with what it cannot take as blocking problems. */
export function createPricer(d: Pick<CheckoutDeps, 'quoter'>): Price {
  /**
   * Each item's SKU: a SKU names itself, the merchant's own variant id the SKU it has in the
   * catalog (undefined: the catalog has neither).
   */
  async function skusOf(items: readonly SessionItem[]): Promise<(string | undefined)[]> {
    const foreign = items.filter((it) => !SKU.test(it.sku)).map((it) => it.sku);
    const resolved = new Map<string, string | undefined>();
    if (foreign.length > 0 && d.quoter.resolveItems) {
      const skus = await d.quoter.resolveItems(foreign).catch((err: unknown) => {
        throw new CheckoutUnavailable(`the catalog cannot name the items now: ${(err as Error).message}`);
      });
      foreign.forEach((id, i) => {
        resolved.set(id, skus[i]);
      });
    }
    return items.map((it) => (SKU.test(it.sku) ? it.sku : resolved.get(it.sku)));
  }

  /**
   * Prices the items through the cart quote; the ones it cannot take become blocking problems.
   * Items of one SKU (repeated, or named once by SKU and once by variant id) are quoted as one
   * line and spread back (subgraphs/procurement/checkout/repeats.ts).
   */
  async function price(
    items: readonly SessionItem[],
    codes: readonly string[],
    currency: string,
    region: string,
    agentId: string,
  ): Promise<SessionPricing> {
    const unquoted: UnquotedItem[] = [];
    const skus = await skusOf(items);
    let indexes: number[] = [];
    items.forEach((it, i) => {
      if (skus[i] !== undefined) indexes.push(i);
      else unquoted.push({ item: i, kind: 'unknown_sku', message: `${it.sku} is not in the catalog` });
    });
    const quantityOf = (i: number) => (items[i] as SessionItem).quantity;
    for (let round = 0; round < QUOTE_ROUNDS && indexes.length > 0; round++) {
      const merged = mergeRepeats(indexes, (i) => skus[i] as string, quantityOf);
      try {
        const q = await d.quoter.quote({
          lines: merged.lines.map((l) => ({ sku: l.sku, quantity: l.quantity })),
          currency,
          region,
          // Promotions count per-customer caps by the agent the order will carry.
          ...(CUSTOMER.test(agentId) ? { customerId: agentId } : {}),
          // A code the cart quote could not even take is simply unknown (rejectedCodes says so).
          coupons: codes.filter((c) => COUPON.test(c.trim())),
        });
        const quoted: QuotedCart = {
          lines: q.lines,
          subtotal: q.subtotal,
          discountTotal: q.discountTotal,
          total: q.total,
          promotions: q.promotions,
          quote: { id: quoteIdOf(q.quoteToken), expiresAt: q.expiresAt, token: q.quoteToken },
          ...(q.inventoryLevels ? { inventoryLevels: q.inventoryLevels } : {}),
        };
        const spread = spreadQuote(quoted, merged, quantityOf);
        return pricedSession(items, codes, spread.quotedItems, spread.quoted, unquoted);
      } catch (err) {
        if (!(err instanceof Problem)) throw err;
        if (err.status !== 422) throw new CheckoutUnavailable(err.message);
        // The quote names the lines it cannot take (/line/<j>): every item of that line is
        // refused; the others are quoted again.
        const refused = new Map<number, string>();
        for (const e of (err.body.errors ?? []) as { pointer: string; message: string }[]) {
          const j = Number(/^\/line\/(\d+)$/.exec(e.pointer)?.[1]);
          for (const item of (Number.isInteger(j) && merged.groups[j]) || []) refused.set(item, e.message);
        }
        if (refused.size === 0) throw new CheckoutUnavailable(err.message);
        for (const [item, message] of refused)
          unquoted.push({
            item,
            kind: /not in the catalog/.test(message) ? 'unknown_sku' : 'unpriced',
            message,
          });
        indexes = indexes.filter((i) => !refused.has(i));
      }
    }
    unquoted.sort((a, b) => a.item - b.item);
    return pricedSession(items, codes, [], null, unquoted);
  }
  return price;
}
