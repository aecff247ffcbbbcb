/**
 * The cart service on its real SQL store (embedded PGlite, and PostgreSQL), with the pricing and the checkout
 * faked at their ports: expiry (CART_TTL_SECONDS) and its refresh on update, owner scope,
 * cancel as deletion, nothing stored from a refused create, conversion to one checkout per cart
 * (existing incomplete one answered, completed one clears the cart, canceled one replaced), and
 * two conversions at once.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCartService } from '../../gateway/agent/cart/service.ts';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { cartMigrations } from '../../subgraphs/procurement/cart/migrations.ts';
import { sqlCartStore } from '../../subgraphs/procurement/cart/sql.ts';
import type {
  CheckoutSession,
  SessionItem,
  SessionPricing,
  SessionStatus,
} from '../../subgraphs/procurement/checkout/session.ts';

const TTL = 60_000;
const alice = { id: 'spiffe://example.org/ns/ai/sa/procurement-agent/alice' } as never;
const bob = { id: 'spiffe://example.org/ns/ai/sa/procurement-agent/bob' } as never;

/** A price per SKU (cents) by its last digits; `SKU-NON-…` is unknown. */
async function price(items: readonly SessionItem[]): Promise<SessionPricing> {
  const lines = items.map((it, item) => {
    const unit = /^SKU-NON-/.test(it.sku) ? 0 : Number(it.sku.slice(-3)) * 100;
    const base = unit * it.quantity;
    return {
      item,
      ...(unit === 0 ? { unpriced: true as const } : {}),
      sku: it.sku,
      name: it.sku,
      quantity: it.quantity,
      unitCents: unit,
      baseCents: base,
      discountCents: 0,
      totalCents: base,
    };
  });
  const total = lines.reduce((s, l) => s + l.totalCents, 0);
  return {
    lines,
    discounts: [],
    rejected: [],
    problems: lines.flatMap((l) =>
      l.unpriced
        ? [
            {
              kind: 'unknown_sku' as const,
              item: l.item,
              message: `${l.sku} is not in the catalog`,
              blocking: true,
            },
          ]
        : [],
    ),
    totals: { baseCents: total, discountCents: 0, subtotalCents: total, totalCents: total },
    quote: null,
  };
}

/** Checkouts by id, their status set by the test. */
function fakeCheckout() {
  const sessions = new Map<string, CheckoutSession>();
  let made = 0;
  return {
    sessions,
    get made() {
      return made;
    },
    port: {
      get: async (id: string) => sessions.get(id) ?? null,
      create: async (cart: { items: readonly SessionItem[] }) => {
        const s = {
          id: `cs_${String(++made).padStart(32, '0')}`,
          status: 'ready_for_payment',
          items: cart.items,
        };
        sessions.set(s.id, s as unknown as CheckoutSession);
        return s as unknown as CheckoutSession;
      },
    },
    set(id: string, status: SessionStatus) {
      sessions.set(id, { ...(sessions.get(id) as CheckoutSession), status });
    },
  };
}

const BACKENDS: readonly [string, () => Promise<{ db: Db; drop?: () => Promise<void> }>][] = [
  ['PGlite', async () => ({ db: await openPglite(undefined, TEST_PGLITE) })],
  [
    'PostgreSQL',
    async () => {
      const pg = await freshPostgres('carts');
      return { db: await openPostgres(pg.url), drop: pg.drop };
    },
  ],
];

describe.each(BACKENDS)('on %s', (_name, open) => {
  let db: Db;
  let drop: (() => Promise<void>) | undefined;
  const clock = new ManualClock();
  let carts: ReturnType<typeof createCartService>;
  /** The checkouts carts are converted into here (the service reads them to clear a cart). */
  const co = fakeCheckout();
  const count = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM carts'))[0]?.n);

  beforeAll(async () => {
    ({ db, drop } = await open());
    await migrate(db, cartMigrations);
    carts = createCartService({
      store: sqlCartStore(db),
      price,
      clock,
      log: pino({ level: 'silent' }),
      ttlMs: TTL,
      sessions: { get: (id) => co.port.get(id) },
    });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const newCart = (items: SessionItem[], owner = alice) =>
    carts.create({
      protocol: 'ucp',
      owner,
      agentId: 'agent-1',
      keyId: null,
      currency: 'USD',
      region: 'US',
      items,
      buyer: null,
      context: null,
    });

  async function made(items: SessionItem[] = [{ sku: 'SKU-ABC-000002', quantity: 3 }]) {
    const o = await newCart(items);
    if (o.kind !== 'ok') throw new Error(`not created: ${o.kind}`);
    return o.cart;
  }

  describe('the cart service', () => {
    it('creates, reads back, and prices as the pricing says', async () => {
      const c = await made();
      expect(c.id).toMatch(/^cart_[0-9a-f]{32}$/);
      expect(c.pricing.totals.totalCents).toBe(600);
      expect(await carts.get(c.id, alice)).toEqual(c);
    });

    it('stores nothing when no item can be bought, and keeps unknown items beside known ones as problems', async () => {
      const before = await count();
      const o = await newCart([{ sku: 'SKU-NON-000001', quantity: 1 }]);
      expect(o.kind).toBe('unavailable');
      expect(await count()).toBe(before);
      const mixed = await made([
        { sku: 'SKU-ABC-000001', quantity: 1 },
        { sku: 'SKU-NON-000001', quantity: 1 },
      ]);
      expect(mixed.pricing.problems).toEqual([expect.objectContaining({ kind: 'unknown_sku', item: 1 })]);
    });

    it('is not found by another owner, for every operation, and is left as it was', async () => {
      const c = await made();
      expect(await carts.get(c.id, bob)).toBeNull();
      expect(await carts.update(c.id, bob, { items: [{ sku: 'SKU-ABC-000001', quantity: 1 }] })).toEqual({
        kind: 'not-found',
      });
      expect(await carts.cancel(c.id, bob)).toEqual({ kind: 'not-found' });
      expect(await carts.toCheckout(c.id, bob, co.port)).toEqual({ kind: 'not-found' });
      expect(await carts.get(c.id, alice)).toEqual(c);
    });

    it('expires after the TTL, and every update moves the expiry on', async () => {
      const c = await made();
      clock.advance(TTL - 1);
      const u = await carts.update(c.id, alice, { items: [{ sku: 'SKU-ABC-000001', quantity: 2 }] });
      expect(u.kind).toBe('ok');
      if (u.kind !== 'ok') return;
      expect(u.cart.expiresAt).toBe(clock.now() + TTL);
      expect(u.cart.pricing.totals.totalCents).toBe(200);
      clock.advance(TTL - 1);
      expect(await carts.get(c.id, alice)).not.toBeNull();
      clock.advance(1);
      expect(await carts.get(c.id, alice)).toBeNull();
      // Read after its time, the row was deleted on the way.
      expect(await db.query('SELECT id FROM carts WHERE id = $1', [c.id])).toEqual([]);
    });

    it('purges expired carts it was never asked for again', async () => {
      await made();
      clock.advance(TTL);
      expect(await carts.purgeExpired()).toBeGreaterThan(0);
      expect((await carts.list(100)).length).toBe(0);
    });

    it('cancels by deleting, answering the cart as it was; then it is not found', async () => {
      const c = await made();
      expect(await carts.cancel(c.id, alice)).toEqual({ kind: 'ok', cart: c });
      expect(await carts.get(c.id, alice)).toBeNull();
      expect(await carts.cancel(c.id, alice)).toEqual({ kind: 'not-found' });
    });

    it('refuses a replacement in which nothing can be bought when asked to, and keeps the cart', async () => {
      const c = await made();
      const o = await carts.update(
        c.id,
        alice,
        { items: [{ sku: 'SKU-NON-000002', quantity: 1 }] },
        { refuseUnbuyable: true },
      );
      expect(o.kind).toBe('unavailable');
      expect(await carts.get(c.id, alice)).toEqual(c);
    });
  });

  describe('conversion to a checkout', () => {
    it('makes one checkout per cart: the incomplete one is answered again', async () => {
      const c = await made();
      const madeBefore = co.made;
      const first = await carts.toCheckout(c.id, alice, co.port);
      expect(first).toMatchObject({ kind: 'ok', existing: false });
      const again = await carts.toCheckout(c.id, alice, co.port);
      expect(again).toMatchObject({ kind: 'ok', existing: true });
      if (first.kind === 'ok' && again.kind === 'ok') expect(again.session.id).toBe(first.session.id);
      expect(co.made - madeBefore).toBe(1);
    });

    it('replaces a canceled checkout, and clears the cart once its checkout is completed', async () => {
      const c = await made();
      const first = await carts.toCheckout(c.id, alice, co.port);
      if (first.kind !== 'ok') throw new Error('not converted');
      co.set(first.session.id, 'canceled');
      const second = await carts.toCheckout(c.id, alice, co.port);
      expect(second).toMatchObject({ kind: 'ok', existing: false });
      if (second.kind !== 'ok') return;
      co.set(second.session.id, 'completed');
      expect(await carts.toCheckout(c.id, alice, co.port)).toEqual({ kind: 'cleared' });
      // Cleared: every operation on the cart is not found (cart.md).
      expect(await carts.get(c.id, alice)).toBeNull();
      expect(await carts.cancel(c.id, alice)).toEqual({ kind: 'not-found' });
    });

    it('two conversions at once end on one linked checkout', async () => {
      const c = await made();
      const [a, b] = await Promise.all([
        carts.toCheckout(c.id, alice, co.port),
        carts.toCheckout(c.id, alice, co.port),
      ]);
      if (a.kind !== 'ok' || b.kind !== 'ok') throw new Error('not converted');
      const linked = (await carts.get(c.id, alice))?.checkoutId;
      expect(a.session.id).toBe(linked);
      expect(b.session.id).toBe(linked);
    });
  });
});
