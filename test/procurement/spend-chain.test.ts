/**
 * The spend step inside the chain alone (registerAgentRoutes on a plain Fastify app, `inject`):
 * deny by default, a ledger that is down, and which order-domain failures give a reservation
 * back. The end-to-end cases over HTTP are in spend.e2e.test.ts.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainUnavailable, type OrderPort } from '../../gateway/agent/order/order-port.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { memorySpendLedger } from '../../subgraphs/procurement/spend/memory.ts';
import { AGENT, ORDERS, validOrder } from './support/agent.ts';
import { agentChain } from './support/chain.ts';

const clock = new ManualClock(Date.UTC(2026, 5, 15, 12));
let app: FastifyInstance;
let placed: string[] = [];
let placeFails: DomainUnavailable | undefined;

const orders: OrderPort = {
  async place(cmd) {
    if (placeFails) throw placeFails;
    placed.push(cmd.orderId ?? 'domain-chosen');
    return {
      status: 'APPROVED',
      order_id: cmd.orderId ?? 'ord_x',
      allocated_budget: cmd.request.max_budget_usd,
      processed_at: 1,
    };
  },
  get: async () => null,
  list: async () => ({ orders: [], nextCursor: null }),
  cancel: async () => ({ kind: 'not-found' }),
};

async function chain(
  ledger: SpendLedger,
  withoutPolicy: 'allow' | 'deny' = 'allow',
): Promise<FastifyInstance> {
  return agentChain({ clock, orders, spend: { ledger, withoutPolicy } });
}

const send = (budget = '40.00', headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: ORDERS,
    remoteAddress: '127.0.0.1',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT, ...headers },
    payload: JSON.stringify(validOrder()).replace('250.75', budget),
  });
const spent = async (ledger: SpendLedger) => (await ledger.status([AGENT], clock.now()))?.spentCents;
const withPolicy = async (budgetCents = 100_00) => {
  const ledger = memorySpendLedger();
  await ledger.putPolicy({ subject: AGENT, currency: 'USD', period: 'day', budgetCents, updatedAt: 0 });
  return ledger;
};

afterEach(async () => {
  await app?.close();
  placed = [];
  placeFails = undefined;
});

describe('identities without a policy', () => {
  it('are refused with 403 spend-policy-required when SPEND_POLICY_DEFAULT=deny, nothing placed', async () => {
    app = await chain(memorySpendLedger(), 'deny');
    const r = await send();
    expect(r.statusCode).toBe(403);
    expect(r.json().type).toMatch(/\/spend-policy-required$/);
    expect(placed).toEqual([]);
    const read = await app.inject({
      url: '/api/v2/procurement/spend',
      remoteAddress: '127.0.0.1',
      headers: { 'x-spiffe-id': AGENT },
    });
    expect(read.json()).toMatchObject({ policy: null, without_policy: 'deny' });
  });

  it('are not limited when SPEND_POLICY_DEFAULT=allow, and the domain picks the order id', async () => {
    app = await chain(memorySpendLedger(), 'allow');
    expect((await send('5000')).statusCode).toBe(201);
    expect(placed).toEqual(['domain-chosen']);
  });
});

describe('the order id', () => {
  it('is fixed before the reservation: fresh without a key, derived from the key with one', async () => {
    app = await chain(await withPolicy());
    await send('1.00');
    await send('1.00', { 'idempotency-key': 'k1' });
    expect(placed[0]).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(placed[1]).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(placed[0]).not.toBe(placed[1]);
  });
});

describe('a ledger that is down', () => {
  it('answers 503 with Retry-After, places nothing, and frees the Idempotency-Key', async () => {
    const working = await withPolicy();
    let down = true;
    const flaky: SpendLedger = {
      ...working,
      reserve: (r) => (down ? Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379')) : working.reserve(r)),
    };
    app = await chain(flaky);
    const r = await send('10.00', { 'idempotency-key': 'k-down' });
    expect(r.statusCode).toBe(503);
    expect(r.headers['content-type']).toMatch(/problem\+json/);
    expect(r.headers['retry-after']).toBe('1');
    expect(placed).toEqual([]);
    down = false;
    expect((await send('10.00', { 'idempotency-key': 'k-down' })).statusCode).toBe(201);
  });
});

describe('an order domain failure', () => {
  it.each([
    ['the store rolled back (in process)', new DomainUnavailable('store failed', true), 0],
    ['the domain answered without placing it', new DomainUnavailable('answered 500', true), 0],
    ['a timeout after sending: the order may exist', new DomainUnavailable('timeout', false), 40_00],
  ])('%s: the reservation is kept only when the order may exist', async (_name, failure, expected) => {
    const ledger = await withPolicy();
    app = await chain(ledger);
    placeFails = failure;
    expect((await send('40.00')).statusCode).toBe(503);
    expect(await spent(ledger)).toBe(expected);
  });

  it('an uncertain failure retried with the same key is charged once', async () => {
    const ledger = await withPolicy();
    app = await chain(ledger);
    placeFails = new DomainUnavailable('timeout', false);
    expect((await send('40.00', { 'idempotency-key': 'k-timeout' })).statusCode).toBe(503);
    placeFails = undefined;
    expect((await send('40.00', { 'idempotency-key': 'k-timeout' })).statusCode).toBe(201);
    expect(await spent(ledger)).toBe(40_00);
  });
});
