/**
 * Checkout orders (one order, many priced lines; docs/procurement.md, "Orders with many lines"):
 * the pure rules that tie lines, total and request together; a round trip through the memory
 * store, the embedded PGlite and the real Postgres with exact amounts; idempotent place on an
 * order id; the outbox events carry the lines and validate against their JSON Schemas; and the
 * lifecycle (approve, reject, expire, cancel, the spend release) works on such an order.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { createOrderDomain, newOrderId } from '../../subgraphs/procurement/domain/order-domain.ts';
import {
  approve,
  checkoutRequest,
  InvalidPlaceOrder,
  OrderIdConflict,
  type OrderLine,
  type PlaceOrder,
  placedBy,
  toResponse,
} from '../../subgraphs/procurement/domain/purchase-order.ts';
import { type OutboxEvent, toCloudEvent } from '../../subgraphs/procurement/outbox/order-events.ts';
import { sqlOrderStore } from '../../subgraphs/procurement/store/sql.ts';
import { eventSchema } from '../pricing/support.ts';
import { drain, type OrderDbs, openOrderDbs, outboxAdapters } from '../support/order-stores.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const AGENT_ID = 'agent-0000001';

/** Cents as "12.50" (the oracle: BigInt, no doubles). */
const text = (c: bigint) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
const cents = (t: string) => BigInt(t.replace('.', ''));

/** A line whose total is right: unitPrice × quantity − discount. */
const line = (sku: string, quantity: number, unitPrice: string, discount = '0.00'): OrderLine => ({
  sku,
  quantity,
  unitPrice,
  discount,
  lineTotal: text(cents(unitPrice) * BigInt(quantity) - cents(discount)),
});
/** 1,000,000,000.00 in cents: the first amount with 10 digits before the point. */
const ONE_BILLION = 100_000_000_000n;
const totalOf = (lines: readonly OrderLine[]) => text(lines.reduce((s, l) => s + cents(l.lineTotal), 0n));

/** The three lines of a cart whose total (6,564.02) is above the /v2 cap and whose quantity (150) is too. */
const LINES: readonly OrderLine[] = [
  line('SKU-ABC-123456', 100, '19.99', '0.33'),
  line('SKU-TOL-000001', 45, '99.50', '12.10'),
  line('SKU-ELC-999999', 5, '19.99', '0.00'),
];

/** A checkout command built as the gateway builds it. */
const checkout = (lines = LINES, over: Partial<PlaceOrder> = {}): PlaceOrder => {
  const total = totalOf(lines);
  return {
    request: checkoutRequest(AGENT_ID, lines, total),
    spiffeId: AGENT,
    traceId: 'checkout',
    lines,
    total,
    checkoutSessionId: 'cs_01HV3P3ABC123',
    ...over,
  };
};

describe('checkout order rules (pure)', () => {
  it('builds the request from the lines: first SKU, the quantities summed, the total as budget', () => {
    expect(totalOf(LINES)).toBe('6564.02');
    expect(checkoutRequest(AGENT_ID, LINES, '6564.02')).toEqual({
      agent_id: AGENT_ID,
      sku: 'SKU-ABC-123456',
      quantity: 150,
      max_budget_usd: '6564.02',
    });
  });

  it('keeps the lines, the total and the session, with the total as the allocated budget, beyond the /v2 limits', () => {
    const o = approve(checkout(), 'ord_1', 1_767_225_600_000);
    expect(o).toMatchObject({
      sku: 'SKU-ABC-123456',
      quantity: 150,
      allocatedBudget: '6564.02',
      lines: LINES,
      total: '6564.02',
      checkoutSessionId: 'cs_01HV3P3ABC123',
    });
    expect(Object.isFrozen(o.lines)).toBe(true);
    // The /v2 read-back is unchanged in shape: the total is the allocated budget.
    expect(toResponse(o)).toEqual({
      status: 'APPROVED',
      order_id: 'ord_1',
      allocated_budget: '6564.02',
      processed_at: 1_767_225_600,
    });
  });

  it('stores a total with trailing zeros as the canonical budget and keeps the total as written', () => {
    const lines = [line('SKU-ABC-123456', 2, '6.25')];
    const o = approve(checkout(lines), 'ord_2', 0);
    expect(o.total).toBe('12.50');
    expect(o.allocatedBudget).toBe('12.5');
    // The gateway may also write the budget as the total's text: the same amount.
    const asTotal = checkout(lines, {
      request: { ...checkoutRequest(AGENT_ID, lines, '12.50'), max_budget_usd: '12.50' as UsdAmount },
    });
    expect(approve(asTotal, 'ord_2', 0).allocatedBudget).toBe('12.5');
    expect(placedBy(o, asTotal)).toBe(true);
  });

  it('accepts a fully discounted checkout (total 0.00)', () => {
    const lines = [line('SKU-ABC-123456', 1, '5.00', '5.00')];
    expect(approve(checkout(lines), 'ord_3', 0)).toMatchObject({ total: '0.00', allocatedBudget: '0' });
  });

  const wrong: [string, () => PlaceOrder][] = [
    ['no lines', () => checkout([], { request: checkoutRequest(AGENT_ID, LINES, totalOf(LINES)) })],
    ['51 lines', () => checkout(Array.from({ length: 51 }, () => line('SKU-ABC-123456', 1, '1.00')))],
    ['a total that is not the sum', () => checkout(LINES, { total: '6564.03' })],
    ['a total with one decimal', () => checkout([line('SKU-ABC-123456', 1, '1.50')], { total: '1.5' })],
    [
      'a line total that is not unitPrice × quantity − discount',
      () => checkout([{ ...line('SKU-ABC-123456', 2, '1.00'), lineTotal: '2.01' }], { total: '2.01' }),
    ],
    [
      'a discount above the line (negative line total)',
      () => checkout([{ ...line('SKU-ABC-123456', 1, '1.00'), discount: '2.00', lineTotal: '-1.00' }]),
    ],
    [
      'an amount as a number',
      () => checkout([{ ...line('SKU-ABC-123456', 1, '1.00'), unitPrice: 1 as unknown as string }]),
    ],
    [
      'an amount with three decimals',
      () => checkout([{ ...line('SKU-ABC-123456', 1, '1.00'), discount: '0.001' }]),
    ],
    ['a line quantity of 0', () => checkout([line('SKU-ABC-123456', 0, '1.00')])],
    ['a line quantity of 10001', () => checkout([line('SKU-ABC-123456', 10_001, '1.00')])],
    [
      'a fractional line quantity',
      () =>
        checkout([{ ...line('SKU-ABC-123456', 1, '2.00'), quantity: 1.5, lineTotal: '3.00' }], {
          total: '3.00',
        }),
    ],
    ['a SKU the contract refuses', () => checkout([line('SKU-abc-123456', 1, '1.00')])],
    [
      "a request SKU other than the first line's",
      () =>
        checkout(LINES, {
          request: { ...checkoutRequest(AGENT_ID, LINES, '6564.02'), sku: 'SKU-TOL-000001' },
        }),
    ],
    [
      'a request quantity other than the sum',
      () => checkout(LINES, { request: { ...checkoutRequest(AGENT_ID, LINES, '6564.02'), quantity: 149 } }),
    ],
    [
      'a budget other than the total',
      () =>
        checkout(LINES, {
          request: { ...checkoutRequest(AGENT_ID, LINES, '6564.02'), max_budget_usd: '5000' as UsdAmount },
        }),
    ],
    ['a checkout session id that is not one', () => checkout(LINES, { checkoutSessionId: 'cs 1' })],
    ['a total without lines', () => ({ ...checkout(), lines: undefined as never })],
    [
      'a checkout session without lines',
      () => ({
        request: checkoutRequest(AGENT_ID, LINES, '6564.02'),
        spiffeId: AGENT,
        traceId: 't',
        checkoutSessionId: 'cs_1',
      }),
    ],
  ];
  it.each(wrong)('refuses %s (InvalidPlaceOrder)', (_what, cmd) => {
    expect(() => approve(cmd(), 'ord_x', 0)).toThrow(InvalidPlaceOrder);
  });

  it('accepts every well-formed cart and keeps its amounts digit for digit (property)', () => {
    const amount = fc.bigInt({ min: 0n, max: 99_999_999n }).map(text);
    const arbLine = fc
      .record({
        sku: fc.stringMatching(/^SKU-[A-Z]{3}-\d{6}$/),
        quantity: fc.integer({ min: 1, max: 10_000 }),
        unitPrice: amount,
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      })
      .map(({ sku, quantity, unitPrice, share }) => {
        const gross = cents(unitPrice) * BigInt(quantity);
        // A discount from 0 to the whole line, in cents; kept where the total has 9 digits.
        const discount = gross - (gross * BigInt(Math.round(share * 1000))) / 1000n;
        return line(sku, quantity, unitPrice, text(discount));
      })
      // Every amount within the 9 digits before the point that the wire allows.
      .filter((l) => cents(l.lineTotal) < ONE_BILLION && cents(l.discount) < ONE_BILLION);
    fc.assert(
      fc.property(fc.array(arbLine, { minLength: 1, maxLength: 50 }), (lines) => {
        fc.pre(lines.reduce((s, l) => s + cents(l.lineTotal), 0n) < ONE_BILLION);
        const o = approve(checkout(lines), 'ord_p', 0);
        expect(o.lines).toEqual(lines);
        expect(cents(o.total as string)).toBe(lines.reduce((s, l) => s + cents(l.lineTotal), 0n));
      }),
      { numRuns: 200 },
    );
  });

  it('compares lines, total and session when an order id is placed again', () => {
    const o = approve(checkout(), 'ord_1', 0);
    expect(placedBy(o, checkout())).toBe(true);
    const fewer = LINES.slice(0, 2);
    expect(placedBy(o, checkout(fewer))).toBe(false);
    const swapped = [LINES[0], LINES[2], LINES[1]] as OrderLine[];
    expect(placedBy(o, checkout(swapped))).toBe(false);
    expect(placedBy(o, checkout(LINES, { checkoutSessionId: 'cs_other' }))).toBe(false);
    expect(placedBy(o, { ...checkout(), checkoutSessionId: undefined })).toBe(false);
    // A /v2 request with the same owner, SKU, quantity and amount is another order.
    expect(
      placedBy(o, { request: checkoutRequest(AGENT_ID, LINES, '6564.02'), spiffeId: AGENT, traceId: 't' }),
    ).toBe(false);
  });
});

let dbs: OrderDbs;
let db: Db;
let lite: Db;
beforeAll(async () => {
  dbs = await openOrderDbs('multiline');
  ({ db, lite } = dbs);
});
afterAll(() => dbs?.close());

const adapters = outboxAdapters(() => dbs);

const placedSchema = eventSchema('order-placed.json');
const cancelledSchema = eventSchema('order-cancelled.json');
const approvalSchema = eventSchema('order-approval.json');
const valid = (schema: ReturnType<typeof eventSchema>, e: OutboxEvent | undefined) => {
  expect(schema(toCloudEvent(e as OutboxEvent)), JSON.stringify(schema.errors)).toBe(true);
};

const EVENT_LINES = LINES.map((l) => ({
  sku: l.sku,
  quantity: l.quantity,
  unit_price: l.unitPrice,
  discount: l.discount,
  line_total: l.lineTotal,
}));

describe.each(adapters)('checkout orders in the %s store', (_name, open) => {
  it('round-trips a multi-line order with exact amounts (its total above the /v2 cap)', async () => {
    const { store } = await open();
    const domain = createOrderDomain(store, new ManualClock(1_767_225_600_500));
    const created = await domain.place(checkout());
    expect(created).toMatchObject({ status: 'APPROVED', allocated_budget: '6564.02' });
    const back = await domain.get(created.order_id);
    expect(back).toMatchObject({
      orderId: created.order_id,
      sku: 'SKU-ABC-123456',
      quantity: 150,
      allocatedBudget: '6564.02',
      lines: LINES,
      total: '6564.02',
      checkoutSessionId: 'cs_01HV3P3ABC123',
    });
    // Every amount as written, trailing zeros included.
    const big = [
      line('SKU-ABC-123456', 10_000, '99999.90', '0.10'),
      line('SKU-ABC-000001', 1, '0.01', '0.01'),
    ];
    const second = await domain.place(checkout(big, { checkoutSessionId: undefined }));
    expect(await domain.get(second.order_id)).toMatchObject({
      lines: big,
      total: '999998999.90',
      allocatedBudget: '999998999.9',
      checkoutSessionId: null,
    });
  });

  it('reads a /v2 order back without lines, total or session', async () => {
    const { store } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const created = await domain.place({
      request: {
        agent_id: AGENT_ID,
        sku: 'SKU-ABC-123456',
        quantity: 1,
        max_budget_usd: '19.99' as UsdAmount,
      },
      spiffeId: AGENT,
      traceId: 't',
    });
    expect(await domain.get(created.order_id)).toMatchObject({
      lines: null,
      total: null,
      checkoutSessionId: null,
    });
  });

  it('places an order id once for the same lines, and answers OrderIdConflict for other lines', async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const orderId = newOrderId();
    const first = await domain.place(checkout(LINES, { orderId }));
    expect(
      await Promise.all([
        domain.place(checkout(LINES, { orderId })),
        domain.place(checkout(LINES, { orderId })),
      ]),
    ).toEqual([first, first]);
    const other = [...LINES.slice(0, 2), line('SKU-ELC-999999', 5, '19.99', '0.01')];
    await expect(domain.place(checkout(other, { orderId }))).rejects.toThrow(OrderIdConflict);
    await expect(domain.place(checkout(LINES, { orderId, checkoutSessionId: 'cs_other' }))).rejects.toThrow(
      OrderIdConflict,
    );
    expect((await drain(outbox)).map((e) => e.subject)).toEqual([orderId]);
    expect((await domain.get(orderId))?.lines).toEqual(LINES);
  });

  it('refuses a command whose lines and request disagree and stores nothing', async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const orderId = newOrderId();
    await expect(domain.place(checkout(LINES, { orderId, total: '1.00' }))).rejects.toThrow(
      InvalidPlaceOrder,
    );
    expect(await domain.get(orderId)).toBeNull();
    expect(await drain(outbox)).toEqual([]);
  });

  it('writes OrderPlaced and OrderCancelled with the lines, total and session, valid against their schemas', async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const created = await domain.place(checkout());
    expect((await domain.cancel(created.order_id, AGENT)).kind).toBe('cancelled');
    const [placed, cancelled, ...rest] = await drain(outbox);
    expect(rest).toEqual([]);
    for (const [e, type] of [
      [placed, EventTypes.OrderPlaced],
      [cancelled, EventTypes.OrderCancelled],
    ] as const)
      expect(e).toMatchObject({
        type,
        data: {
          sku: 'SKU-ABC-123456',
          quantity: 150,
          allocated_budget: '6564.02',
          lines: EVENT_LINES,
          total: '6564.02',
          checkout_session_id: 'cs_01HV3P3ABC123',
        },
      });
    valid(placedSchema, placed);
    valid(cancelledSchema, cancelled);
    // A /v2 order's events keep their shape (no lines), and a /v2 quantity above 100 stays invalid.
    const v2 = await domain.place({
      request: { agent_id: AGENT_ID, sku: 'SKU-ABC-123456', quantity: 100, max_budget_usd: '1' as UsdAmount },
      spiffeId: AGENT,
      traceId: 't',
    });
    const [plain] = await drain(outbox);
    expect(plain?.subject).toBe(v2.order_id);
    expect(Object.keys(plain?.data ?? {})).not.toContain('lines');
    valid(placedSchema, plain);
    const tooMany = { ...(plain as OutboxEvent), data: { ...(plain as OutboxEvent).data, quantity: 101 } };
    expect(placedSchema(toCloudEvent(tooMany))).toBe(false);
  });

  it("keeps the buyer's consent with the order and sends it with every event, valid against the schemas", async () => {
    const { store, outbox } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    // Only the four known choices, each only when a boolean: nothing is assumed.
    const given = { marketing: true, sale_of_data: false, analytics: 'yes', tracking: true };
    const created = await domain.place({ ...checkout(), buyerConsent: given });
    const kept = { marketing: true, sale_of_data: false };
    expect((await domain.get(created.order_id))?.buyerConsent).toEqual(kept);
    expect((await domain.cancel(created.order_id, AGENT)).kind).toBe('cancelled');
    const [placed, cancelled] = await drain(outbox);
    expect(placed?.data).toMatchObject({ buyer_consent: kept });
    expect(cancelled?.data).toMatchObject({ buyer_consent: kept });
    valid(placedSchema, placed);
    valid(cancelledSchema, cancelled);
    // None given (or none of the four): no field at all, in the order and in its events.
    const none = await domain.place(checkout(undefined, { checkoutSessionId: 'cs_consentless' }));
    expect(await domain.get(none.order_id)).not.toHaveProperty('buyerConsent');
    const [plain] = await drain(outbox);
    expect(Object.keys(plain?.data ?? {})).not.toContain('buyer_consent');
    // The schema refuses a choice that is not a boolean, and an empty consent.
    for (const bad of [{ marketing: 'yes' }, {}])
      expect(
        placedSchema(
          toCloudEvent({
            ...(placed as OutboxEvent),
            data: { ...(placed as OutboxEvent).data, buyer_consent: bad },
          } as OutboxEvent),
        ),
      ).toBe(false);
  });

  it('goes through approval, rejection and expiry like any order, its events carrying the lines', async () => {
    const { store, outbox } = await open();
    const clock = new ManualClock();
    const released: string[] = [];
    const domain = createOrderDomain(store, clock, {
      cancelWindowMs: 3_600_000,
      approvalTtlMs: 60_000,
      release: async (id) => void released.push(id),
    });
    const approved = await domain.place(checkout(LINES, { approvalsRequired: 1 }));
    const rejected = await domain.place(checkout(LINES, { approvalsRequired: 1 }));
    const expiring = await domain.place(checkout(LINES, { approvalsRequired: 1 }));
    const withdrawn = await domain.place(checkout(LINES, { approvalsRequired: 1 }));
    expect(approved.status).toBe('PENDING_APPROVAL');
    expect(
      await domain.decide(approved.order_id, { kind: 'approve', operator: 'alice', note: null }),
    ).toMatchObject({
      kind: 'decided',
      order: { status: 'APPROVED', lines: LINES },
    });
    expect(
      await domain.decide(rejected.order_id, { kind: 'reject', operator: 'alice', reason: 'no' }),
    ).toMatchObject({
      kind: 'decided',
      order: { status: 'REJECTED', total: '6564.02' },
    });
    expect(await domain.cancel(withdrawn.order_id, AGENT)).toMatchObject({ kind: 'cancelled', first: true });
    clock.advance(60_000);
    expect(await domain.expireDue(10)).toBe(1);
    expect((await domain.get(expiring.order_id))?.status).toBe('EXPIRED');
    expect(released.sort()).toEqual([rejected.order_id, expiring.order_id].sort());
    const events = await drain(outbox);
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        ...Array(4).fill(EventTypes.OrderApprovalRequested),
        EventTypes.OrderApproved,
        EventTypes.OrderRejected,
        EventTypes.OrderCancelled,
        EventTypes.OrderExpired,
      ].sort(),
    );
    for (const e of events) {
      expect(e.data).toMatchObject({ lines: EVENT_LINES, total: '6564.02' });
      valid(e.type === EventTypes.OrderCancelled ? cancelledSchema : approvalSchema, e);
    }
  });

  it('finds a checkout order by the SKU of any of its lines', async () => {
    const { store } = await open();
    const domain = createOrderDomain(store, new ManualClock());
    const sku = `SKU-QRS-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
    const lines = [line('SKU-ABC-123456', 1, '1.00'), line(sku, 2, '3.00')];
    const created = await domain.place(checkout(lines));
    expect((await domain.list({ sku, limit: 10 })).orders.map((o) => o.orderId)).toEqual([created.order_id]);
  });
});

describe.each([
  ['Postgres', () => db],
  ['embedded PGlite', () => lite],
])('the %s store keeps the /v2 limits for /v2 orders only', (_name, dbOf) => {
  it('still refuses a /v2 order above 5000 or above 100 units', async () => {
    const domain = createOrderDomain(sqlOrderStore(dbOf()), new ManualClock());
    const v2 = (quantity: number, budget: string) =>
      domain.place({
        request: { agent_id: AGENT_ID, sku: 'SKU-ABC-123456', quantity, max_budget_usd: budget as UsdAmount },
        spiffeId: AGENT,
        traceId: 't',
      });
    await expect(v2(1, '5000.01')).rejects.toThrow();
    await expect(v2(101, '1')).rejects.toThrow();
  });

  it('refuses a checkout row whose total is not its budget even from a caller that skipped the domain', async () => {
    const store = sqlOrderStore(dbOf());
    const o = approve(checkout(), newOrderId(), 0);
    const { orderEvent } = await import('../../subgraphs/procurement/outbox/order-events.ts');
    await expect(
      store.insert({ ...o, total: '1.00' }, orderEvent(EventTypes.OrderPlaced, o, 0)),
    ).rejects.toThrow();
    await expect(
      store.insert({ ...o, lines: [], orderId: newOrderId() }, orderEvent(EventTypes.OrderPlaced, o, 0)),
    ).rejects.toThrow();
    expect(await store.get(o.orderId)).toBeNull();
  });
});
