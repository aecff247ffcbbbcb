import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import {
  type Cart,
  type CartChange,
  cartExpired,
  createCart,
  type NewCart,
  newCartId,
  updateCart,
  withCheckout,
} from '../../../subgraphs/procurement/cart/cart.ts';
import type { CartStore } from '../../../subgraphs/procurement/cart/store.ts';
import {
  buyable,
  type CheckoutSession,
  isOpen,
  orderPlaced,
  type SessionItem,
  type SessionPricing,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { Price } from '../checkout/price.ts';
import { CheckoutUnavailable } from '../checkout/types.ts';

/**
 * The cart service: one protocol-neutral core under UCP's cart capability and ACP's Cart API,
 * as the checkout service is under both checkouts. A cart is priced by the checkout's own
 * pricing (the cart quote: a cart's totals are GET /cart/quote's to the cent), and that is all
 * it does: it reserves no stock, spends no budget and places nothing. Conversion makes (or
 * finds) the one checkout session of a cart (cart.md, "Cart-to-Checkout Conversion").
 */

/** What conversion needs of the checkout service. */
export interface CheckoutPort {
  get(id: string, owner: SpiffeId): Promise<CheckoutSession | null>;
  /** A new checkout session started from the cart (the edge adds its protocol's own fields). */
  create(cart: Cart): Promise<CheckoutSession>;
}

export interface CartDeps {
  readonly store: CartStore;
  /** The checkout's own pricing (../checkout/price.ts: the cart quote; SKUs or feed ids). */
  readonly price: Price;
  readonly clock: Clock;
  readonly log: Logger;
  /** How long a cart lives after its last change (CART_TTL_SECONDS). */
  readonly ttlMs: number;
  /**
   * The checkout sessions (the checkout service's `get`): a cart whose checkout was completed is
   * cleared. Absent: carts are never cleared (conversion then needs one: toCheckout's port).
   */
  readonly sessions?: Pick<CheckoutPort, 'get'>;
}

export interface CreateCartCommand extends Omit<NewCart, 'id' | 'owner'> {
  readonly owner: SpiffeId;
}

export type CartOutcome =
  | { readonly kind: 'ok'; readonly cart: Cart }
  /** No such cart for this owner: never made, another's, expired, canceled or cleared (404). */
  | { readonly kind: 'not-found' }
  /** Nothing in it can be bought (every item unknown, unpriced or out of stock): not stored. */
  | { readonly kind: 'unavailable'; readonly pricing: SessionPricing };

export type ConversionOutcome =
  /** `existing`: the incomplete checkout already made from this cart (no second one). */
  | { readonly kind: 'ok'; readonly session: CheckoutSession; readonly existing: boolean }
  | { readonly kind: 'not-found' }
  /** The cart's checkout was completed: the cart is cleared (cart.md: then `not_found`). */
  | { readonly kind: 'cleared' };

/** The store cannot answer now, or the cart kept changing: 503, nothing changed (as checkout's). */
export class CartUnavailable extends CheckoutUnavailable {
  override name = 'CartUnavailable';
}

/** How often a change is recomputed when another change of the same cart landed first. */
const CAS_ROUNDS = 3;

export function createCartService(d: CartDeps) {
  /** Carts have no discount codes (neither release defines cart extensions): automatic promotions only. */
  const price = (c: Pick<Cart, 'currency' | 'region' | 'agentId'>, items: readonly SessionItem[]) =>
    d.price(items, [], c.currency, c.region, c.agentId);

  /** The owner's live cart, else null; an expired one is deleted on the way (lazily). */
  async function load(id: string, owner: SpiffeId): Promise<Cart | null> {
    const c = await d.store.get(id);
    if (!c || c.owner !== owner.id) return null;
    if (cartExpired(c, d.clock.now())) {
      await d.store.delete(c.id, c.version).catch(() => false);
      return null;
    }
    return c;
  }

  /** The cart unless its checkout was completed (then cleared, as cart.md allows: not found). */
  async function live(id: string, owner: SpiffeId): Promise<Cart | null> {
    const c = await load(id, owner);
    if (!c?.checkoutId || !d.sessions) return c;
    const s = await d.sessions.get(c.checkoutId, owner);
    return s && orderPlaced(s) ? null : c;
  }

  async function create(cmd: CreateCartCommand): Promise<CartOutcome> {
    const pricing = await price(cmd, cmd.items);
    // Refused as a whole, nothing stored (cart.md: "the business MAY return an error").
    if (!buyable(pricing)) return { kind: 'unavailable', pricing };
    const now = d.clock.now();
    const c = createCart({ ...cmd, id: newCartId(), owner: cmd.owner.id }, pricing, now, d.ttlMs);
    if (!(await d.store.insert(c))) throw new Error(`cart id ${c.id} collided`);
    return { kind: 'ok', cart: c };
  }

  /**
   * A full replacement, re-priced; the expiry moves on. `refuseUnbuyable`: a replacement in
   * which nothing can be bought is refused and the cart kept as it was (ACP: 422); else it is
   * stored with its messages (UCP, as a checkout update).
   */
  async function update(
    id: string,
    owner: SpiffeId,
    change: CartChange,
    opts: { readonly refuseUnbuyable?: boolean } = {},
  ): Promise<CartOutcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const c = await live(id, owner);
      if (!c) return { kind: 'not-found' };
      const pricing = await price({ ...c, region: change.region ?? c.region }, change.items);
      if (opts.refuseUnbuyable && !buyable(pricing)) return { kind: 'unavailable', pricing };
      const next = updateCart(c, change, pricing, d.clock.now(), d.ttlMs);
      if (await d.store.replace(next)) return { kind: 'ok', cart: next };
    }
    throw new CartUnavailable('the cart kept changing while it was updated');
  }

  /** Deletes the cart and answers it as it was (cart.md: "the cart state before deletion"). */
  async function cancel(id: string, owner: SpiffeId): Promise<CartOutcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const c = await live(id, owner);
      if (!c) return { kind: 'not-found' };
      if (await d.store.delete(c.id, c.version)) return { kind: 'ok', cart: c };
    }
    throw new CartUnavailable('the cart kept changing while it was canceled');
  }

  /**
   * The checkout of a cart: the incomplete one already made from it, else a new one from the
   * cart's contents (the request's overlapping fields are the edge's to ignore), linked to the
   * cart. A canceled or expired checkout is replaced by a new one; a completed one clears the
   * cart. Two conversions at once: the one whose link lands wins, the other answers its checkout.
   */
  async function toCheckout(
    cartId: string,
    owner: SpiffeId,
    checkout: CheckoutPort,
  ): Promise<ConversionOutcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const c = await load(cartId, owner);
      if (!c) return { kind: 'not-found' };
      if (c.checkoutId) {
        const s = await checkout.get(c.checkoutId, owner);
        if (s && orderPlaced(s)) return { kind: 'cleared' };
        if (s && (isOpen(s) || s.status === 'complete_in_progress'))
          return { kind: 'ok', session: s, existing: true };
      }
      const session = await checkout.create(c);
      if (await d.store.replace(withCheckout(c, session.id, d.clock.now())))
        return { kind: 'ok', session, existing: false };
      d.log.info(
        { cartId, sessionId: session.id },
        'cart converted twice at once; the other checkout stands',
      );
    }
    throw new CartUnavailable('the cart kept changing while it was converted');
  }

  return {
    create,
    update,
    cancel,
    toCheckout,
    get: live,
    list: (limit: number) => d.store.list({ nowMs: d.clock.now(), limit }),
    purgeExpired: () => d.store.purgeExpired(d.clock.now()),
  };
}

export type CartService = ReturnType<typeof createCartService>;
