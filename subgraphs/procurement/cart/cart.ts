import { randomUUID } from 'node:crypto';
import type { SessionItem, SessionPricing } from '../checkout/session.ts';

/**
 * The cart: a basket an agent platform builds before it means to buy (UCP's cart capability,
 * ACP's Cart API), priced by the same cart quote as a checkout session (an estimate: nothing is
 * reserved, no budget is spent) and converted into a checkout when the buyer is ready.
 * Protocol-neutral, as the session core is (../checkout/session.ts): the edges render it.
 * A cart has no status: it exists until it expires, is canceled (deleted) or its checkout is
 * completed (cleared), and is then not found (cart.md, rfc.cart.md). Pure functions, no I/O.
 */
export interface Cart {
  readonly id: string;
  /** Which protocol created it: its responses are rendered by that protocol's edge. */
  readonly protocol: 'acp' | 'ucp';
  /** The SPIFFE ID of the agent identity that owns it; anyone else gets 404. */
  readonly owner: string;
  /** The agent_id a checkout made from it carries (promotions count per-customer caps by it). */
  readonly agentId: string;
  /** The API key that created it; null for other identities. */
  readonly keyId: string | null;
  /** ISO 4217, upper case. */
  readonly currency: string;
  /** The pricing region: UCP's `context.address_country`, else the configured default. */
  readonly region: string;
  readonly items: readonly SessionItem[];
  /** Kept as sent and echoed back; a checkout made from the cart starts with it. */
  readonly buyer: Readonly<Record<string, unknown>> | null;
  /** UCP's `context` as sent (localisation signals), echoed back. */
  readonly context: Readonly<Record<string, unknown>> | null;
  /** The estimate: lines, discounts (automatic promotions), problems, totals from the quote. */
  readonly pricing: SessionPricing;
  /** The checkout session made from it (UCP `cart_id`): one incomplete checkout per cart. */
  readonly checkoutId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Epoch ms after which the cart is not found; every update moves it on (rfc.cart.md §4.4). */
  readonly expiresAt: number;
  /** Bumped by every change; a change is written only over the version it was computed from. */
  readonly version: number;
}

export const newCartId = (): string => `cart_${randomUUID().replace(/-/g, '')}`;
export const CART_ID = /^cart_[0-9a-f]{32}$/;

export interface NewCart {
  readonly id: string;
  readonly protocol: 'acp' | 'ucp';
  readonly owner: string;
  readonly agentId: string;
  readonly keyId: string | null;
  readonly currency: string;
  readonly region: string;
  readonly items: readonly SessionItem[];
  readonly buyer: Record<string, unknown> | null;
  readonly context: Record<string, unknown> | null;
}

/** A new cart with its first estimate. Pure: id and time are given. */
export function createCart(n: NewCart, pricing: SessionPricing, nowMs: number, ttlMs: number): Cart {
  return {
    ...n,
    pricing,
    checkoutId: null,
    createdAt: nowMs,
    updatedAt: nowMs,
    expiresAt: nowMs + ttlMs,
    version: 0,
  };
}

/**
 * What an update replaces (a full replacement: cart.md, rfc.cart.md §4.4). `buyer` and `context`
 * absent stay as they were; items are always sent.
 */
export interface CartChange {
  readonly items: readonly SessionItem[];
  readonly buyer?: Record<string, unknown> | null;
  readonly context?: Record<string, unknown> | null;
  readonly region?: string;
}

/** The cart after an update, re-priced, its expiry moved on. Pure. */
export function updateCart(
  c: Cart,
  change: CartChange,
  pricing: SessionPricing,
  nowMs: number,
  ttlMs: number,
): Cart {
  return {
    ...c,
    items: change.items,
    buyer: change.buyer !== undefined ? change.buyer : c.buyer,
    context: change.context !== undefined ? change.context : c.context,
    region: change.region ?? c.region,
    pricing,
    updatedAt: nowMs,
    expiresAt: nowMs + ttlMs,
    version: c.version + 1,
  };
}

/** The cart linked to the checkout made from it, one version on. Pure. */
export const withCheckout = (c: Cart, checkoutId: string, nowMs: number): Cart => ({
  ...c,
  checkoutId,
  updatedAt: nowMs,
  version: c.version + 1,
});

/** A cart whose time is up is gone, whether or not anyone deleted it yet. */
export const cartExpired = (c: Pick<Cart, 'expiresAt'>, nowMs: number): boolean => nowMs >= c.expiresAt;
