/**
 * Stock in the session core: a line is out of stock when its quantity is above its product's
 * units in stock (the catalog's inventoryLevel; 0 = none). Pure pricing, then the service's
 * completion, which re-checks stock (without reserving it) and never places an order for a line
 * short of it. The ports are in memory; the quote is a fake whose stock the test changes.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CartQuoter, createCheckoutService } from '../../gateway/agent/checkout/service.ts';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';
import {
  pricedSession,
  type QuotedCart,
  stockProblems,
} from '../../subgraphs/procurement/checkout/pricing.ts';
import { buyable, type CheckoutSession, readiness } from '../../subgraphs/procurement/checkout/session.ts';
import type { PlaceOrder } from '../../subgraphs/procurement/domain/purchase-order.ts';
import {
  approvingOrders,
  checkoutServiceOf,
  flatQuoter,
  memorySessionStore,
} from './support/checkout-service.ts';

const line = (item: number, sku: string, quantity: number, name = sku) => ({ item, sku, name, quantity });

describe('stockProblems', () => {
  it.each([
    [1, 0, 'is out of stock'],
    [3, 2, 'insufficient stock for Widget (SKU-ABC-000001): 2 available, 3 asked'],
    [999, 998, '998 available, 999 asked'],
  ])('flags quantity %i over %i in stock: %s', (quantity, level, text) => {
    const [p] = stockProblems([line(0, 'SKU-ABC-000001', quantity, 'Widget')], [level]);
    expect(p).toMatchObject({ kind: 'out_of_stock', item: 0, blocking: true });
    expect(p?.message).toContain(text);
  });

  it.each([
    [1, 1],
    [50, 50],
    [3, 10],
  ])('leaves quantity %i with %i in stock alone (the whole stock may be bought)', (quantity, level) => {
    expect(stockProblems([line(0, 'SKU-ABC-000001', quantity)], [level])).toEqual([]);
  });

  it('checks nothing where the stock is unknown, nor an unpriced line', () => {
    expect(
      stockProblems(
        [line(0, 'SKU-ABC-000001', 5), { ...line(1, 'SKU-ABC-000002', 5), unpriced: true as const }],
        [undefined, 0],
      ),
    ).toEqual([]);
  });
});

describe('a priced session with stock', () => {
  const quoted = (levels?: number[]): QuotedCart => ({
    lines: [
      { sku: 'SKU-ABC-000001', name: 'A', quantity: 2, unitPrice: 10, lineTotal: 20, discount: 0, total: 20 },
      { sku: 'SKU-TOL-000010', name: 'B', quantity: 1, unitPrice: 9, lineTotal: 9, discount: 0, total: 9 },
    ],
    subtotal: 29,
    discountTotal: 0,
    total: 29,
    promotions: { status: 'evaluated', applied: [], notApplied: [], coupons: [] },
    quote: { id: 'q', expiresAt: '2026-11-26T12:15:00.000Z', token: 't' },
    ...(levels ? { inventoryLevels: levels } : {}),
  });
  const items = [
    { sku: 'SKU-ABC-000001', quantity: 2 },
    { sku: 'SKU-TOL-000010', quantity: 1 },
  ];

  it('prices an out-of-stock line (totals stay the quote’s) and is not ready, with the problem at its item', () => {
    const p = pricedSession(items, [], [0, 1], quoted([50, 0]), []);
    expect(p.totals.totalCents).toBe(2900);
    expect(p.lines[1]).toMatchObject({ sku: 'SKU-TOL-000010', totalCents: 900 });
    expect(p.problems).toEqual([expect.objectContaining({ kind: 'out_of_stock', item: 1, blocking: true })]);
    expect(readiness(p)).toBe('not_ready_for_payment');
    expect(buyable(p)).toBe(true);
  });

  it('maps stock through the quote’s lines to the items (an unknown item first)', () => {
    const withUnknown = [{ sku: 'nope', quantity: 1 }, ...items];
    const p = pricedSession(withUnknown, [], [1, 2], quoted([1, 5]), [
      { item: 0, kind: 'unknown_sku', message: 'nope is not in the catalog' },
    ]);
    expect(p.problems.map((x) => [x.kind, x.item])).toEqual([
      ['unknown_sku', 0],
      ['out_of_stock', 1],
    ]);
    expect(buyable(p)).toBe(true);
  });

  it('is not buyable when every line is unknown or out of stock', () => {
    const p = pricedSession(items, [], [0, 1], quoted([0, 0]), []);
    expect(buyable(p)).toBe(false);
  });

  it('is ready when every line is within stock, and when the quote says nothing of stock', () => {
    expect(readiness(pricedSession(items, [], [0, 1], quoted([2, 1]), []))).toBe('ready_for_payment');
    expect(readiness(pricedSession(items, [], [0, 1], quoted(), []))).toBe('ready_for_payment');
  });
});

const OWNER = (() => {
  const p = parseSpiffeId('spiffe://example.org/ns/ai/sa/procurement-agent/stock');
  if (!p.ok) throw new Error('bad test id');
  return p.value as SpiffeId;
})();
const T0 = Date.UTC(2026, 10, 26, 12);

describe('a completion re-checks stock', () => {
  let stock: Map<string, number>;
  let stockReads: number;
  let placed: Map<string, PlaceOrder>;
  let rows: Map<string, CheckoutSession>;
  let service: ReturnType<typeof createCheckoutService>;

  const flat = flatQuoter(T0);
  /** Every SKU costs 10.00; stock from the map, read at quote time and on the re-check. */
  const quoter: CartQuoter = {
    async quote(cart) {
      return { ...(await flat.quote(cart)), inventoryLevels: cart.lines.map((l) => stock.get(l.sku) ?? 0) };
    },
    async inventoryLevels(skus) {
      stockReads++;
      return skus.map((s) => stock.get(s));
    },
  };

  beforeEach(() => {
    stock = new Map([
      ['SKU-ABC-000001', 50],
      ['SKU-TOL-000010', 0],
    ]);
    stockReads = 0;
    placed = new Map();
    const store = memorySessionStore();
    rows = store.rows;
    service = checkoutServiceOf({ store, quoter, orders: approvingOrders(placed, () => T0), now: () => T0 });
  });

  const open = (sku: string, quantity: number) =>
    service
      .create({
        protocol: 'acp',
        owner: OWNER,
        agentId: 'agent-stock-0001',
        keyId: null,
        currency: 'USD',
        region: 'US',
        items: [{ sku, quantity }],
        codes: [],
        extensions: [],
        buyer: null,
        fulfillment: null,
      })
      .then((c) => c.session);
  const complete = (id: string) => service.complete(id, OWNER, { purchaseOrderNumber: 'PO-1', traceId: 't' });

  it('refuses a session created out of stock as not ready, and places no order', async () => {
    const s = await open('SKU-TOL-000010', 1);
    expect(s.status).toBe('not_ready_for_payment');
    const r = await complete(s.id);
    expect(r.kind).toBe('not-ready');
    expect(placed.size).toBe(0);
  });

  it('places no order when the stock fell below the quantity since the quote: not ready, out_of_stock', async () => {
    const s = await open('SKU-ABC-000001', 3);
    expect(s.status).toBe('ready_for_payment');
    stock.set('SKU-ABC-000001', 2);
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('not_ready_for_payment');
    expect(r.kind === 'ok' && r.session.problems).toEqual([
      expect.objectContaining({ kind: 'out_of_stock', item: 0, blocking: true }),
    ]);
    expect(placed.size).toBe(0);
    // It stays refused until the agent changes the session.
    expect((await complete(s.id)).kind).toBe('not-ready');
    const u = await service.update(s.id, OWNER, { items: [{ sku: 'SKU-ABC-000001', quantity: 2 }] });
    expect(u.kind === 'ok' && u.session.status).toBe('ready_for_payment');
    expect((await complete(s.id)).kind === 'ok' && placed.size).toBe(1);
  });

  it('does not take stock: a completion leaves the catalog’s level as it was (checked, not reserved)', async () => {
    const s = await open('SKU-ABC-000001', 50);
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(stockReads).toBe(1);
    expect(stock.get('SKU-ABC-000001')).toBe(50);
  });

  it('is 503 (CheckoutUnavailable), nothing placed, when the stock cannot be read', async () => {
    const s = await open('SKU-ABC-000001', 1);
    const broken = quoter.inventoryLevels;
    quoter.inventoryLevels = async () => {
      throw new Error('catalog down');
    };
    try {
      await expect(complete(s.id)).rejects.toThrow('catalog down');
    } finally {
      quoter.inventoryLevels = broken;
    }
    expect(placed.size).toBe(0);
    expect(rows.get(s.id)?.status).toBe('ready_for_payment');
  });
});
