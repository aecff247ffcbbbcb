/**
 * A completion after the session's quote ran out (15 minutes): the session is priced again, and
 * when the total is the same it completes at once, at the new quote. Found by session 53's
 * review: the re-priced session was one version on but not written, and the completion took it
 * one version further, so its compare-and-set never matched and every retry answered `busy`.
 * The ports are in memory; the clock is the test's.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CartQuoter, createCheckoutService } from '../../gateway/agent/checkout/service.ts';
import { parseSpiffeId, type SpiffeId } from '../../lib/auth/spiffe.ts';
import type { CheckoutSession } from '../../subgraphs/procurement/checkout/session.ts';
import type { PlaceOrder } from '../../subgraphs/procurement/domain/purchase-order.ts';
import {
  approvingOrders,
  checkoutServiceOf,
  flatQuoter,
  memorySessionStore,
} from './support/checkout-service.ts';

const OWNER = (() => {
  const p = parseSpiffeId('spiffe://example.org/ns/ai/sa/procurement-agent/expired-quote');
  if (!p.ok) throw new Error('bad test id');
  return p.value as SpiffeId;
})();
const T0 = Date.UTC(2026, 10, 30, 12);

describe('a completion after the quote ran out', () => {
  let now: number;
  let unitPrice: number;
  let placed: Map<string, PlaceOrder>;
  let rows: Map<string, CheckoutSession>;
  let service: ReturnType<typeof createCheckoutService>;

  /** Every SKU at `unitPrice`; each quote good for 15 minutes from the test's `now`. */
  const quoter: CartQuoter = {
    async quote(cart) {
      const q = await flatQuoter(now).quote(cart);
      const lines = q.lines.map((l) => ({
        ...l,
        unitPrice,
        lineTotal: unitPrice * l.quantity,
        total: unitPrice * l.quantity,
      }));
      const total = lines.reduce((n, l) => n + l.total, 0);
      return { ...q, lines, subtotal: total, total };
    },
  };
  beforeEach(() => {
    now = T0;
    unitPrice = 10;
    placed = new Map();
    const store = memorySessionStore();
    rows = store.rows;
    service = checkoutServiceOf({
      store,
      quoter,
      orders: approvingOrders(placed, () => now),
      now: () => now,
    });
  });

  const open = () =>
    service
      .create({
        protocol: 'acp',
        owner: OWNER,
        agentId: 'agent-expired-01',
        keyId: null,
        currency: 'USD',
        region: 'US',
        items: [{ sku: 'SKU-ABC-000001', quantity: 2 }],
        codes: [],
        extensions: [],
        buyer: null,
        fulfillment: null,
      })
      .then((c) => c.session);
  const complete = (id: string) => service.complete(id, OWNER, { purchaseOrderNumber: 'PO-7', traceId: 't' });

  it('completes at once when the total is unchanged, at the new quote', async () => {
    const s = await open();
    expect(s.status).toBe('ready_for_payment');
    now = T0 + 16 * 60_000;
    const r = await complete(s.id);
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.session.status).toBe('completed');
    expect(placed.size).toBe(1);
    const stored = rows.get(s.id) as CheckoutSession;
    expect(stored.status).toBe('completed');
    expect(Date.parse(stored.quote?.expiresAt as string)).toBe(now + 15 * 60_000);
    expect(stored.totals.totalCents).toBe(2000);
  });

  it('places nothing when the total changed: the session, with the new total, waits for the agent', async () => {
    const s = await open();
    now = T0 + 16 * 60_000;
    unitPrice = 12;
    const r = await complete(s.id);
    expect(r.kind === 'ok' && r.session.status).toBe('not_ready_for_payment');
    expect(placed.size).toBe(0);
    expect(rows.get(s.id)?.totals.totalCents).toBe(2400);
  });
});
