/**
 * The checkout session service's completion, alone, with its ports in memory: the spend ledger
 * is the real in-process one, the order domain and the quote are fakes that can fail the way a
 * real one does (refused write, lost answer). What a completion holds, gives back and resumes.
 */
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CreateCommand, createCheckoutService } from '../../gateway/agent/checkout/service.ts';
import { DomainUnavailable, type OrderPort } from '../../gateway/agent/order/order-port.ts';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';
import { orderIdOfSession } from '../../subgraphs/procurement/checkout/session.ts';
import type { PurchaseOrderResponse, UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import type { PlaceOrder } from '../../subgraphs/procurement/domain/purchase-order.ts';
import { memorySpendLedger } from '../../subgraphs/procurement/spend/memory.ts';
import { flatQuoter, memorySessionStore } from './support/checkout-service.ts';

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
  service = createCheckoutService({
    store,
    quoter: flatQuoter(T0),
    orders: orders.port,
    spend: { ledger, withoutPolicy: 'allow' },
    clock: { now: () => now },
    log: pino({ level: 'silent' }),
    sessionTtlMs: 3_600_000,
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
