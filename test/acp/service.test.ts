/**
 * The checkout session service's completion, alone, with its ports in memory: the spend ledger
 * is the real in-process one, the order domain and the quote are fakes that can fail the way a
 * real one does (refused write, lost answer). What a completion holds, gives back and resumes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RedemptionsPort } from '../../gateway/agent/checkout/redemptions.ts';
import type {
  CartQuoter,
  CreateCommand,
  createCheckoutService,
} from '../../gateway/agent/checkout/service.ts';
import { DomainUnavailable, type OrderPort } from '../../gateway/agent/order/order-port.ts';
import { TEST_PGLITE } from '../../harness/services.ts';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { orderIdOfSession } from '../../subgraphs/procurement/checkout/session.ts';
import type { PurchaseOrderResponse, UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import type { PlaceOrder } from '../../subgraphs/procurement/domain/purchase-order.ts';
import { memorySpendLedger } from '../../subgraphs/procurement/spend/memory.ts';
import { migrations } from '../../subgraphs/promotions/store/migrations.ts';
import type { RedemptionStore } from '../../subgraphs/promotions/store/redemptions.ts';
import { createSqlRedemptionStore } from '../../subgraphs/promotions/store/redemptions-sql.ts';
import { checkoutServiceOf, flatQuoter, memorySessionStore } from './support/checkout-service.ts';

const OWNER = (() => {
  const p = parseSpiffeId('spiffe://example.org/ns/ai/sa/procurement-agent/unit');
  if (!p.ok) throw new Error('bad test id');
  return p.value as SpiffeId;
})();
const T0 = Date.UTC(2026, 10, 26, 12);
const HOLD = 30_000;

type Behaviour = 'ok' | 'refused' | 'lost';

function fakeOrders() {
  const placed = new Map<string, PlaceOrder>();
  const o = {
    placed,
    next: 'ok' as Behaviour,
    calls: 0,
    port: {
      async place(cmd: PlaceOrder): Promise<PurchaseOrderResponse> {
        o.calls++;
        const b = o.next;
        if (b === 'refused') throw new DomainUnavailable('write rolled back', true);
        placed.set(cmd.orderId as string, cmd);
        // Stored, but the answer never arrives.
        if (b === 'lost') throw new DomainUnavailable('timeout after sending', false);
        return {
          status: 'APPROVED',
          order_id: cmd.orderId as string,
          allocated_budget: cmd.request.max_budget_usd,
          processed_at: T0 / 1000,
        };
      },
      async get(orderId: string) {
        const cmd = placed.get(orderId);
        return cmd
          ? {
              spiffeId: cmd.spiffeId,
              response: {
                status: 'APPROVED' as const,
                order_id: orderId,
                allocated_budget: cmd.request.max_budget_usd as UsdAmount,
                processed_at: T0 / 1000,
              },
            }
          : null;
      },
      list: async () => ({ orders: [], nextCursor: null }),
      cancel: async () => ({ kind: 'not-found' as const }),
    } satisfies OrderPort,
  };
  return o;
}

let now = T0;
let store: ReturnType<typeof memorySessionStore>;
let orders: ReturnType<typeof fakeOrders>;
let ledger: ReturnType<typeof memorySpendLedger>;
let service: ReturnType<typeof createCheckoutService>;

beforeEach(async () => {
  now = T0;
  store = memorySessionStore();
  orders = fakeOrders();
  ledger = memorySpendLedger();
  await ledger.putPolicy({
    subject: OWNER.id,
    currency: 'USD',
    period: 'day',
    budgetCents: 100_000,
    updatedAt: T0,
  });
  service = checkoutServiceOf({
    store,
    quoter: flatQuoter(T0),
    orders: orders.port,
    ledger,
    now: () => now,
    completionHoldMs: HOLD,
  });
});

/** A create command of the unit owner; `over` replaces fields. */
const command = (over: Partial<CreateCommand> = {}): CreateCommand => ({
  protocol: 'acp',
  owner: OWNER,
  agentId: 'agent-unit-0001',
  keyId: null,
  currency: 'USD',
  region: 'US',
  items: [{ sku: 'SKU-ABC-000001', quantity: 3 }],
  codes: [],
  extensions: [],
  buyer: null,
  fulfillment: null,
  ...over,
});
const open = () => service.create(command()).then((c) => c.session);
const complete = (id: string) => service.complete(id, OWNER, { purchaseOrderNumber: 'PO-1', traceId: 't' });
const spent = async () => (await ledger.status([OWNER.id], now))?.spentCents;

describe('a completion', () => {
  it('reserves the total once and places one order', async () => {
    const s = await open();
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(await spent()).toBe(3000);
    expect(orders.placed.size).toBe(1);
  });

  it('gives back its reservation when the order domain certainly stored nothing, and can be completed again', async () => {
    const s = await open();
    orders.next = 'refused';
    await expect(complete(s.id)).rejects.toThrow(/could not be placed/);
    expect(await spent()).toBe(0);
    const back = await service.get(s.id, OWNER);
    expect(back?.status).toBe('not_ready_for_payment');
    expect(back?.problems.map((p) => p.kind)).toEqual(['order_failed']);
    orders.next = 'ok';
    const again = await complete(s.id);
    expect(again.kind === 'ok' && again.session.status).toBe('completed');
    expect(await spent()).toBe(3000);
  });

  it('gives back a reservation of another total left under its order id (an undone completion whose release was lost) and charges its own once', async () => {
    const s = await open();
    // An earlier completion of this session reserved 12.34 and was undone, but its release did
    // not reach the ledger; the cart is 30.00 now.
    const left = { orderId: orderIdOfSession(s.id), candidates: [OWNER.id], sku: 'SKU-ABC-000001' };
    expect((await ledger.reserve({ ...left, amountCents: 1234, now })).kind).toBe('reserved');
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(orders.placed.size).toBe(1);
    // The ledger holds the order's own total, once: not 12.34 (a replay) nor 42.34.
    expect(await spent()).toBe(3000);
    expect(await ledger.reserve({ ...left, amountCents: 3000, now })).toEqual({ kind: 'replayed' });
  });

  it('releases nothing when an order stands under its order id beside a reservation of another total (503)', async () => {
    const done = await open();
    expect((await complete(done.id)).kind).toBe('ok');
    const s = await open();
    const left = { orderId: orderIdOfSession(s.id), candidates: [OWNER.id], sku: 'SKU-ABC-000001' };
    expect((await ledger.reserve({ ...left, amountCents: 1234, now })).kind).toBe('reserved');
    // An order under the session's id (how is beside the point: its reservation must stay).
    orders.placed.set(left.orderId, orders.placed.get(orderIdOfSession(done.id)) as PlaceOrder);
    const calls = orders.calls;
    await expect(complete(s.id)).rejects.toThrow(/order already/);
    expect(orders.calls).toBe(calls);
    expect(await spent()).toBe(3000 + 1234);
    expect(await ledger.reserve({ ...left, amountCents: 1234, now })).toEqual({ kind: 'replayed' });
  });

  it('keeps the reservation of a completion that started while an undone one was still giving its own back', async () => {
    const s = await open();
    orders.next = 'refused';
    // The undone completion's release is held until the next completion has reserved.
    const release = ledger.release.bind(ledger);
    let letGo: () => void = () => {};
    const gate = new Promise<void>((r) => {
      letGo = r;
    });
    ledger.release = async (...args) => {
      await gate;
      return release(...args);
    };
    const undone = complete(s.id).catch((e: Error) => e);
    // It has written the session back (completable again) and waits on its release.
    for (let i = 0; i < 100 && (await store.get(s.id))?.status !== 'not_ready_for_payment'; i++)
      await new Promise((r) => setImmediate(r));
    ledger.release = release;
    orders.next = 'ok';
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    letGo();
    expect(String(await undone)).toMatch(/could not be placed/);
    // The order stands and stays counted: the late release found the reservation not its own.
    expect(orders.placed.size).toBe(1);
    expect(await spent()).toBe(3000);
  });

  it('holds the session while it runs: another completion, an update and a cancel wait (busy)', async () => {
    const s = await open();
    orders.next = 'lost';
    await expect(complete(s.id)).rejects.toThrow();
    now += HOLD - 1;
    expect((await complete(s.id)).kind).toBe('busy');
    expect(
      (await service.update(s.id, OWNER, { items: [{ sku: 'SKU-ABC-000001', quantity: 9 }] })).kind,
    ).toBe('busy');
    expect((await service.cancel(s.id, OWNER)).kind).toBe('busy');
    // Nothing was given back while the outcome was unknown.
    expect(await spent()).toBe(3000);
  });

  it('after its hold, a lost answer is settled by the order that was stored: completed, charged once', async () => {
    const s = await open();
    orders.next = 'lost';
    await expect(complete(s.id)).rejects.toThrow();
    now += HOLD;
    const read = await service.get(s.id, OWNER);
    expect(read?.status).toBe('completed');
    expect(await spent()).toBe(3000);
    expect(orders.placed.size).toBe(1);
  });

  it('after its hold, a completion resumes a stopped one with the same order id (nothing charged twice)', async () => {
    const s = await open();
    orders.next = 'lost';
    await expect(complete(s.id)).rejects.toThrow();
    // The order was not stored after all (e.g. the process died before the write).
    orders.placed.clear();
    now += HOLD;
    orders.next = 'ok';
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(orders.placed.size).toBe(1);
    expect(await spent()).toBe(3000);
  });

  it('after its hold, a completion that stored no order is undone by a read: the reservation goes back', async () => {
    const s = await open();
    orders.next = 'lost';
    await expect(complete(s.id)).rejects.toThrow();
    orders.placed.clear();
    now += HOLD;
    const read = await service.get(s.id, OWNER);
    expect(read?.status).toBe('not_ready_for_payment');
    expect(await spent()).toBe(0);
    expect((await service.cancel(s.id, OWNER)).kind).toBe('ok');
  });

  it('refuses to complete a session of another owner (not found) and a canceled one (not allowed)', async () => {
    const s = await open();
    const other = parseSpiffeId('spiffe://example.org/ns/ai/sa/procurement-agent/other');
    if (!other.ok) throw new Error('bad id');
    expect((await service.complete(s.id, other.value, { purchaseOrderNumber: 'X', traceId: 't' })).kind).toBe(
      'not-found',
    );
    await service.cancel(s.id, OWNER);
    expect((await complete(s.id)).kind).toBe('not-allowed');
    expect(orders.calls).toBe(0);
  });
});

describe('promotion redemptions at completion', () => {
  // Each code <C> applies the promotion PROMO-<C>, 1.00 off; the real SQL redemption store (on
  // PGlite) counts them, each once per customer.
  const couponQuoter = (t: number): CartQuoter => {
    const flat = flatQuoter(t);
    return {
      async quote(cart) {
        const q = await flat.quote(cart);
        const codes = (cart.coupons ?? []).map((c) => c.trim().toUpperCase());
        const sku = q.lines[0]?.sku ?? '';
        return {
          ...q,
          discountTotal: codes.length,
          total: q.subtotal - codes.length,
          promotions: {
            status: 'evaluated',
            applied: codes.map((c) => ({
              promotionId: `PROMO-${c}`,
              name: c,
              couponCode: c,
              amount: 1,
              allocations: [{ sku, amount: 1 }],
            })),
            notApplied: [],
            coupons: codes.map((c) => ({ code: c, status: 'APPLIED', promotionId: `PROMO-${c}` })),
          },
        };
      },
    };
  };
  let db: Db;
  let redemptions: RedemptionStore;
  /** The next release is lost (the call fails before it reaches the store). */
  let loseRelease: boolean;
  /** Releases that reached the store. */
  let releases: number;
  let svc: ReturnType<typeof createCheckoutService>;
  beforeAll(async () => {
    db = await openPglite(undefined, TEST_PGLITE);
    await migrate(db, migrations);
    redemptions = createSqlRedemptionStore(db);
  });
  afterAll(() => db.close());
  beforeEach(() => {
    loseRelease = false;
    releases = 0;
    const port: RedemptionsPort = {
      redeem: (r) =>
        redemptions.redeem(
          r.orderId,
          r.customerId,
          r.promotionIds.map((promotionId) => ({ promotionId, cap: 1 })),
        ),
      async release(r) {
        if (loseRelease) {
          loseRelease = false;
          throw new Error('promotions answered 503');
        }
        releases++;
        return redemptions.release(r.orderId, r.customerId);
      },
    };
    svc = checkoutServiceOf({
      store,
      quoter: couponQuoter(T0),
      orders: orders.port,
      ledger,
      redemptions: port,
      now: () => now,
      completionHoldMs: HOLD,
    });
  });
  const done = (id: string) => svc.complete(id, OWNER, { purchaseOrderNumber: 'PO-1', traceId: 't' });
  const promotionsOf = (s: { discounts: readonly { promotionId: string }[] }) =>
    s.discounts.map((x) => x.promotionId);

  it('gives back the redemptions of another set left under its order id (an undone completion whose release was lost) and redeems its own', async () => {
    const agentId = 'agent-redeem-0001';
    const { session: s } = await svc.create(command({ agentId, codes: ['P1'] }));
    expect(promotionsOf(s)).toEqual(['PROMO-P1']);
    // The first completion redeems P1, its order is refused and the completion undone, but the
    // release of P1 does not reach promotions.
    orders.next = 'refused';
    loseRelease = true;
    await expect(done(s.id)).rejects.toThrow(/could not be placed/);
    expect(await redemptions.countsFor(agentId)).toEqual(new Map([['PROMO-P1', 1]]));
    // The cart now uses P2 instead (same total): the same order id, another set.
    const changed = await svc.update(s.id, OWNER, { codes: ['P2'] });
    expect(changed.kind === 'ok' && promotionsOf(changed.session)).toEqual(['PROMO-P2']);
    orders.next = 'ok';
    const r = await done(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(orders.placed.size).toBe(1);
    // P2, which the order used, counts against its cap (not an ALREADY_RECORDED of P1 taken as
    // a replay); P1, which it did not use, is given back.
    expect(await redemptions.countsFor(agentId)).toEqual(
      new Map([
        ['PROMO-P1', 0],
        ['PROMO-P2', 1],
      ]),
    );
    const again = await redemptions.redeem('another-order', agentId, [{ promotionId: 'PROMO-P2', cap: 1 }]);
    expect(again.status).toBe('LIMIT_REACHED');
  });

  it('takes a record of the same set left under its order id as a replay: counted once', async () => {
    const agentId = 'agent-redeem-0002';
    const { session: s } = await svc.create(command({ agentId, codes: ['P1'] }));
    orders.next = 'refused';
    loseRelease = true;
    await expect(done(s.id)).rejects.toThrow(/could not be placed/);
    orders.next = 'ok';
    const r = await done(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(await redemptions.countsFor(agentId)).toEqual(new Map([['PROMO-P1', 1]]));
    // Replayed as it stood: not given back and redeemed afresh (which would count the same).
    expect(releases).toBe(0);
  });
});

describe('a create under an id derived from its request', () => {
  const derived = (id: string, replayWithinMs: number) =>
    service.create(command({ items: [{ sku: 'SKU-ABC-000001', quantity: 1 }], id, replayWithinMs }));
  it('meets its twin within the window, and is a new session once the twin is older', async () => {
    const first = await derived('cs_derived0000000000000000000000001', 1_000);
    expect(first).toMatchObject({ existing: false, session: { id: 'cs_derived0000000000000000000000001' } });
    now += 999;
    const twin = await derived('cs_derived0000000000000000000000001', 1_000);
    expect(twin).toMatchObject({ existing: true, session: { id: first.session.id } });
    now += 1;
    const later = await derived('cs_derived0000000000000000000000001', 1_000);
    expect(later.existing).toBe(false);
    expect(later.session.id).not.toBe(first.session.id);
    expect(later.session.id).toMatch(/^cs_[0-9a-f]{32}$/);
  });
});

describe('lines', () => {
  it('keep the request order, an unknown SKU as an unpriced line at its own index', async () => {
    const { session: s } = await service.create(
      command({
        items: [
          { sku: 'not-a-sku', quantity: 1 },
          { sku: 'SKU-ABC-000001', quantity: 2 },
        ],
      }),
    );
    expect(s.lines.map((l) => [l.item, l.sku, l.unpriced ?? false, l.totalCents])).toEqual([
      [0, 'not-a-sku', true, 0],
      [1, 'SKU-ABC-000001', false, 2000],
    ]);
    expect(s.status).toBe('not_ready_for_payment');
    expect(s.problems).toEqual([expect.objectContaining({ kind: 'unknown_sku', item: 0, blocking: true })]);
  });
});
