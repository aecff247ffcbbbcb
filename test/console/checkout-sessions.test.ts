/**
 * GraphQL `checkoutSessions` (the console's Checkout page): on the embedded system with sessions
 * an ACP platform created, and the resolver alone over a store in memory with a clock (a
 * session out of time is reported expired, and a filter still fills its page).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import {
  checkoutSessionResolvers,
  selectSessions,
  sessionView,
  storedStatuses,
} from '../../subgraphs/procurement/checkout/graphql.ts';
import {
  type CheckoutSession,
  createSession,
  EMPTY_TOTALS,
  type SessionStatus,
  withStatus,
} from '../../subgraphs/procurement/checkout/session.ts';
import type { CheckoutSessionStore } from '../../subgraphs/procurement/checkout/store.ts';
import { acp, expectSession, issueKey, totalOf } from '../acp/support/acp.ts';

const SESSIONS = `query ($statuses: [CheckoutSessionStatus!], $first: Int) {
  checkoutSessions(statuses: $statuses, first: $first) {
    id status protocol owner agentId keyId currency orderId createdAt updatedAt expiresAt
    discountDecimal totalDecimal lines { sku name quantity unitPriceDecimal discountDecimal lineTotalDecimal }
  }
}`;

interface Row {
  id: string;
  status: string;
  owner: string;
  keyId: string | null;
  currency: string;
  orderId: string | null;
  totalDecimal: string;
  updatedAt: string;
  lines: { sku: string; quantity: number; unitPriceDecimal: string; lineTotalDecimal: string }[];
}

describe('checkoutSessions through /graphql (embedded)', () => {
  let sys: TestSystem;
  let reader: string;
  const spiffeId = 'spiffe://example.org/ns/ai/sa/procurement-agent/console-sessions';
  const ids: Record<'open' | 'completed' | 'canceled', string> = { open: '', completed: '', canceled: '' };
  let keyId = '';
  let openTotal = 0;

  beforeAll(async () => {
    sys = await startEmbedded();
    reader = await sys.token(['orders:read'], 'ops-reader');
    const { key, id } = await issueKey(sys, { spiffeId });
    keyId = id;
    const open = (items: unknown[]) =>
      acp(sys.url, key, 'POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: items,
      });
    const done = expectSession(await open([{ id: 'SKU-ABC-000001', quantity: 1 }]), 201);
    ids.completed = String(done.id);
    expectSession(
      await acp(sys.url, key, 'POST', `/checkout_sessions/${ids.completed}/complete`, {
        payment_data: { purchase_order_number: 'PO-CONSOLE-1', payment_terms: 'net_30' },
      }),
    );
    const canceled = expectSession(await open([{ id: 'SKU-TOL-000007', quantity: 1 }]), 201);
    ids.canceled = String(canceled.id);
    expectSession(await acp(sys.url, key, 'POST', `/checkout_sessions/${ids.canceled}/cancel`, {}));
    const ready = expectSession(
      await open([
        { id: 'SKU-ABC-000001', quantity: 2 },
        { id: 'SKU-ELC-000004', quantity: 3 },
      ]),
      201,
    );
    ids.open = String(ready.id);
    openTotal = totalOf(ready) ?? -1;
  }, 120_000);
  afterAll(() => sys?.close());

  const list = async (variables: Record<string, unknown> = {}, token = reader) => {
    const r = await sys.gql(SESSIONS, { token, variables });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return (r.data as { checkoutSessions: Row[] }).checkoutSessions;
  };

  it.each([
    ['no token', undefined, 'UNAUTHENTICATED'],
    ['a token without orders:read', ['agents:admin', 'agents:read', 'orders:approve'], 'FORBIDDEN'],
  ])('refuses %s', async (_what, roles, code) => {
    const token = roles ? await sys.token(roles, 'no-orders-read') : undefined;
    const r = await sys.gql(SESSIONS, token ? { token } : {});
    expect(r.errors?.[0]?.extensions?.code).toBe(code);
    expect(r.data?.checkoutSessions ?? null).toBeNull();
  });

  it('lists every session, most recently changed first, with its owner, key, lines and exact total', async () => {
    const rows = await list();
    expect(rows.map((r) => r.id)).toEqual([ids.open, ids.canceled, ids.completed]);
    const updated = rows.map((r) => Date.parse(r.updatedAt));
    expect([...updated].sort((a, b) => b - a)).toEqual(updated);
    const open = rows[0] as Row;
    expect(open).toMatchObject({
      status: 'READY_FOR_PAYMENT',
      owner: spiffeId,
      keyId,
      currency: 'USD',
      orderId: null,
    });
    // The ACP total in cents, as exact text with two places.
    expect(open.totalDecimal).toBe((openTotal / 100).toFixed(2));
    expect(open.lines.map((l) => [l.sku, l.quantity])).toEqual([
      ['SKU-ABC-000001', 2],
      ['SKU-ELC-000004', 3],
    ]);
    for (const l of open.lines) expect(l.unitPriceDecimal).toMatch(/^\d+\.\d{2}$/);
  });

  it.each([
    [['READY_FOR_PAYMENT', 'NOT_READY_FOR_PAYMENT'], 'open'],
    [['COMPLETED'], 'completed'],
    [['CANCELED'], 'canceled'],
  ] as const)('filters by status %j', async (statuses, which) => {
    const rows = await list({ statuses });
    expect(rows.map((r) => r.id)).toEqual([ids[which]]);
  });

  it('names the order a completed session placed; finds nothing for a status no session has', async () => {
    const [done] = await list({ statuses: ['COMPLETED'] });
    expect(done?.orderId).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(await list({ statuses: ['PENDING_APPROVAL'] })).toEqual([]);
  });

  it('keeps first within 1 to 200', async () => {
    expect((await list({ first: 1 })).map((r) => r.id)).toEqual([ids.open]);
    for (const first of [0, 201]) {
      const r = await sys.gql(SESSIONS, { token: reader, variables: { first } });
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });
});

describe('checkoutSessions resolver (a store in memory, a clock)', () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  const start = clock.now();
  let n = 0;
  const session = (status: SessionStatus, ttlMs: number): CheckoutSession => {
    const s = createSession(
      {
        id: `cs_${String(++n).padStart(32, '0')}`,
        protocol: 'acp',
        owner: 'spiffe://example.org/ns/ai/sa/procurement-agent',
        agentId: 'agent-0000001',
        keyId: null,
        currency: 'USD',
        region: 'US',
        items: [{ sku: 'SKU-ABC-000001', quantity: 2 }],
        codes: [],
        extensions: [],
        buyer: null,
        fulfillment: null,
        ttlMs,
      },
      {
        lines: [
          {
            item: 0,
            sku: 'SKU-ABC-000001',
            name: 'Widget',
            quantity: 2,
            unitCents: 1250,
            baseCents: 2500,
            discountCents: 100,
            totalCents: 2400,
          },
        ],
        discounts: [],
        rejected: [],
        problems: [],
        totals: {
          ...EMPTY_TOTALS,
          baseCents: 2500,
          discountCents: 100,
          subtotalCents: 2400,
          totalCents: 2400,
        },
        quote: null,
      },
      start + n,
    );
    return status === s.status ? s : withStatus(s, status, start + n);
  };
  // Newest (last changed) first, as the SQL store answers.
  const memoryStore = (rows: CheckoutSession[]): CheckoutSessionStore & { reads: number[] } => {
    const reads: number[] = [];
    return {
      reads,
      insert: async () => true,
      get: async () => null,
      replace: async () => true,
      remove: async () => 0,
      removeRehearsedBefore: async () => 0,
      list: async (q) => {
        reads.push(q.limit);
        return rows
          .filter((s) => !q.statuses?.length || q.statuses.includes(s.status))
          .sort((a, b) => b.updatedAt - a.updatedAt)
          .slice(0, q.limit);
      },
    };
  };
  const query = async (store: CheckoutSessionStore, args: Record<string, unknown>) => {
    const resolvers = checkoutSessionResolvers(store, clock) as unknown as {
      Query: { checkoutSessions: (p: unknown, a: unknown) => Promise<{ id: string; status: string }[]> };
    };
    return resolvers.Query.checkoutSessions(null, args);
  };

  it('prints cents as exact text with two places, times as ISO 8601', () => {
    const s = session('ready_for_payment', 60_000);
    expect(sessionView(s, start)).toMatchObject({
      status: 'READY_FOR_PAYMENT',
      totalDecimal: '24.00',
      discountDecimal: '1.00',
      lines: [
        {
          sku: 'SKU-ABC-000001',
          unitPriceDecimal: '12.50',
          discountDecimal: '1.00',
          lineTotalDecimal: '24.00',
        },
      ],
      expiresAt: new Date(s.expiresAt).toISOString(),
    });
  });

  it('leaves out the zero line of an item that could not be priced', () => {
    const s = session('not_ready_for_payment', 60_000);
    const unpriced = {
      ...s.lines[0],
      sku: 'SKU-NOT-000000',
      unitCents: 0,
      baseCents: 0,
      discountCents: 0,
      totalCents: 0,
      unpriced: true,
    };
    const view = sessionView({ ...s, lines: [...s.lines, unpriced] as CheckoutSession['lines'] }, start);
    expect(view.lines.map((l) => l.sku)).toEqual(['SKU-ABC-000001']);
  });

  it('reports an open session past its expiry as EXPIRED, and finds it by that status only', async () => {
    const stale = session('ready_for_payment', 1_000);
    const fresh = session('ready_for_payment', 3_600_000);
    const store = memoryStore([stale, fresh]);
    clock.advance(60_000);
    expect(await query(store, { statuses: ['READY_FOR_PAYMENT'], first: 50 })).toMatchObject([
      { id: fresh.id, status: 'READY_FOR_PAYMENT' },
    ]);
    expect(await query(store, { statuses: ['EXPIRED'], first: 50 })).toMatchObject([
      { id: stale.id, status: 'EXPIRED' },
    ]);
    expect((await query(store, { first: 50 })).map((s) => s.status)).toEqual([
      'READY_FOR_PAYMENT',
      'EXPIRED',
    ]);
  });

  it('reads further when sessions out of time fill the first read, so the page is full', async () => {
    const fresh = session('not_ready_for_payment', 3_600_000);
    const stale = Array.from({ length: 8 }, () => session('ready_for_payment', 1));
    const store = memoryStore([fresh, ...stale]);
    clock.advance(1_000);
    const got = await query(store, { statuses: ['NOT_READY_FOR_PAYMENT', 'READY_FOR_PAYMENT'], first: 2 });
    expect(got.map((s) => s.id)).toEqual([fresh.id]);
    // Reads of 2 and 8 rows hold only sessions out of time; the read of 32 gets all 9 stored.
    expect(store.reads).toEqual([2, 8, 32]);
  });

  it('asks the store for the open statuses too when EXPIRED is wanted', () => {
    expect(storedStatuses([])).toBeUndefined();
    expect(storedStatuses(['completed'])).toEqual(['completed']);
    expect(storedStatuses(['expired'])).toEqual(['expired', 'not_ready_for_payment', 'ready_for_payment']);
    const s = session('completed', 1);
    expect(selectSessions([s], ['completed'], start + 10_000_000, 5)).toEqual([s]);
    expect(selectSessions([s], ['expired'], start + 10_000_000, 5)).toEqual([]);
  });
});
