/**
 * The distributed topology's door to the order domain for the lifecycle (issue 12): the
 * gateway's HTTP adapter (list, cancel) against the procurement process's internal routes,
 * over real HTTP, with the embedded SQL store behind them. The answers must be those of the
 * in-process adapter; the internal routes re-check the caller and the parameters.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOrders } from '../../gateway/agent/order/http.ts';
import { inProcessOrders } from '../../gateway/agent/order/in-process.ts';
import { DomainUnavailable, type OrderPort } from '../../gateway/agent/order/order-port.ts';
import { TEST_PGLITE } from '../../harness/services.ts';
import { ManualClock } from '../../lib/clock.ts';
import { type Db, migrate } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { createOrderDomain, type OrderDomain } from '../../subgraphs/procurement/domain/order-domain.ts';
import { OrderIdConflict } from '../../subgraphs/procurement/domain/purchase-order.ts';
import {
  GATEWAY_SECRET_HEADER,
  INTERNAL_ORDERS_PATH,
  internalOrderRoutes,
} from '../../subgraphs/procurement/internal-http.ts';
import { orderMigrations } from '../../subgraphs/procurement/store/migrations.ts';
import { sqlOrderStore } from '../../subgraphs/procurement/store/sql.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const SECRET = 'test-gateway-secret-0123456789';
const clock = new ManualClock(1_767_225_600_000);
let db: Db;
let app: FastifyInstance;
let domain: OrderDomain;
let remote: OrderPort & { close(): Promise<void> };
let local: OrderPort;
let url: string;

beforeAll(async () => {
  db = await openPglite(undefined, TEST_PGLITE);
  await migrate(db, orderMigrations);
  domain = createOrderDomain(sqlOrderStore(db), clock, { cancelWindowMs: 60_000 });
  app = Fastify();
  await app.register(
    internalOrderRoutes(domain, {
      GATEWAY_SHARED_SECRET: SECRET,
      SPIFFE_TRUST_DOMAINS: ['example.org'],
      ORDER_BODY_LIMIT_BYTES: 4096,
    }),
  );
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  remote = httpOrders(url, SECRET, 2000);
  local = inProcessOrders(domain);
});
afterAll(async () => {
  await remote.close();
  await app.close();
  await db.close();
});

const place = async (spiffeId: string, amount = '250.5') => {
  const o = await domain.place({
    request: {
      agent_id: 'agent-0000001',
      sku: 'SKU-ABC-123456',
      quantity: 1,
      max_budget_usd: amount as UsdAmount,
    },
    spiffeId,
    traceId: 't',
  });
  clock.advance(1);
  return o;
};

describe('the HTTP adapter answers what the in-process adapter answers', () => {
  it('lists the owner orders page by page, exact amounts included', async () => {
    const me = `${AGENT}/http-list`;
    const ids = [];
    for (const amount of ['0.01', '250.5', '4999.99']) ids.push((await place(me, amount)).order_id);
    await place(`${AGENT}/someone-else`);
    const p1 = await remote.list(me, { limit: 2 });
    expect(p1).toEqual(await local.list(me, { limit: 2 }));
    expect(p1.orders.map((o) => o.allocated_budget)).toEqual(['4999.99', '250.5']);
    expect(p1.nextCursor).not.toBeNull();
    const p2 = await remote.list(me, { limit: 2, cursor: p1.nextCursor as string });
    expect(p2).toEqual(await local.list(me, { limit: 2, cursor: p1.nextCursor as string }));
    expect([...p1.orders, ...p2.orders].map((o) => o.order_id)).toEqual([...ids].reverse());
    expect(p2.nextCursor).toBeNull();
  });

  it('cancels: first, again (not first), another identity (not found), after the window (409)', async () => {
    const me = `${AGENT}/http-cancel`;
    const o = await place(me);
    const late = await place(me);
    expect(await remote.cancel(o.order_id, `${AGENT}/thief`)).toEqual({ kind: 'not-found' });
    const first = await remote.cancel(o.order_id, me);
    expect(first).toEqual({ kind: 'cancelled', first: true, response: { ...o, status: 'CANCELLED' } });
    expect(await remote.cancel(o.order_id, me)).toEqual({ ...first, first: false });
    expect(await remote.cancel(`ord_${'d'.repeat(32)}`, me)).toEqual({ kind: 'not-found' });
    clock.advance(60_001);
    expect(await remote.cancel(late.order_id, me)).toEqual({ kind: 'not-cancellable', response: late });
  });
});

describe('a rehearsal over the internal place route (the distributed warm-up, issue 48)', () => {
  it('runs the domain and answers as placed, but stores nothing', async () => {
    const count = async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM purchase_orders'))[0]?.n);
    const before = await count();
    const placed = domain.placed();
    const answer = await remote.place({
      request: {
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-123456',
        quantity: 2,
        max_budget_usd: '42.5' as UsdAmount,
      },
      spiffeId: `${AGENT}/warm-up`,
      traceId: 'warm-up',
      rehearsal: true,
    });
    expect(answer).toMatchObject({ status: 'APPROVED', allocated_budget: '42.5' });
    expect(await domain.get(answer.order_id)).toBeNull();
    expect(await count()).toBe(before);
    expect(domain.placed()).toBe(placed);
  });
});

describe('the internal routes re-check their caller and parameters', () => {
  const get = (path: string, headers: Record<string, string> = { [GATEWAY_SECRET_HEADER]: SECRET }) =>
    fetch(`${url}${path}`, { headers });
  it.each([
    ['no gateway secret', `${INTERNAL_ORDERS_PATH}?spiffe_id=${encodeURIComponent(AGENT)}&limit=1`, {}, 403],
    [
      'a caller that is not an agent',
      `${INTERNAL_ORDERS_PATH}?spiffe_id=spiffe://example.org/x&limit=1`,
      undefined,
      403,
    ],
    ['limit 0', `${INTERNAL_ORDERS_PATH}?spiffe_id=${encodeURIComponent(AGENT)}&limit=0`, undefined, 422],
    ['limit 101', `${INTERNAL_ORDERS_PATH}?spiffe_id=${encodeURIComponent(AGENT)}&limit=101`, undefined, 422],
    [
      'a foreign cursor',
      `${INTERNAL_ORDERS_PATH}?spiffe_id=${encodeURIComponent(AGENT)}&limit=1&cursor=abc`,
      undefined,
      422,
    ],
  ])('refuses a list with %s', async (_what, path, headers, status) => {
    expect((await get(path, headers)).status).toBe(status);
  });

  it('refuses a cancel without the gateway secret or for a caller that is not an agent', async () => {
    const post = (headers: Record<string, string>, spiffeId: string) =>
      fetch(`${url}${INTERNAL_ORDERS_PATH}/ord_${'e'.repeat(32)}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ spiffeId }),
      });
    expect((await post({}, AGENT)).status).toBe(403);
    expect(
      (await post({ [GATEWAY_SECRET_HEADER]: SECRET }, 'spiffe://example.org/ns/ai/sa/other')).status,
    ).toBe(403);
    expect(await (await post({ [GATEWAY_SECRET_HEADER]: SECRET }, AGENT)).json()).toEqual({
      kind: 'not-found',
    });
  });

  it.each([
    ['another amount', { max_budget_usd: '250.51' }],
    ['another quantity', { quantity: 2 }],
    ['another sku', { sku: 'SKU-ABC-654321' }],
    ['another agent_id', { agent_id: 'agent-0000002' }],
  ])(
    'refuses a retry under a stored order id with %s, over HTTP as in process; the same request finds the order',
    async (_, change) => {
      // The attempt whose reply was lost (a 503 after the commit released the key) stored this order.
      const orderId = `ord_${Buffer.from(JSON.stringify(change)).toString('hex').slice(0, 32).padEnd(32, '0')}`;
      const request = {
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-123456',
        quantity: 1,
        max_budget_usd: '250.5' as UsdAmount,
      };
      const first = await domain.place({ request, spiffeId: AGENT, traceId: 'lost', orderId });
      const other = {
        request: { ...request, ...change } as typeof request,
        spiffeId: AGENT,
        traceId: 'retry',
        orderId,
      };
      for (const port of [remote, local]) {
        await expect(port.place(other)).rejects.toBeInstanceOf(OrderIdConflict);
        expect(await port.place({ ...other, request })).toEqual(first);
      }
      // Another identity with the same id is another request too.
      await expect(
        remote.place({ request, spiffeId: `${AGENT}/b`, traceId: 'x', orderId }),
      ).rejects.toBeInstanceOf(OrderIdConflict);
      expect(
        (await domain.list({ spiffeId: AGENT, limit: 100 })).orders.filter((o) => o.orderId === orderId),
      ).toHaveLength(1);
    },
  );

  it('carries the approval policy that applied with the order (issue 50), and refuses one that is not a policy', async () => {
    const request = {
      agent_id: 'agent-0000001',
      sku: 'SKU-ABC-123456',
      quantity: 1,
      max_budget_usd: '250.5' as UsdAmount,
    };
    const approvalPolicy = {
      subject: AGENT,
      currency: 'USD',
      approval_above: '100.00',
      second_approval_above: '500.00',
    };
    const placed = await remote.place({
      request,
      spiffeId: `${AGENT}/policy`,
      traceId: 't',
      approvalsRequired: 1,
      approvalPolicy,
    });
    expect(placed.status).toBe('PENDING_APPROVAL');
    expect((await domain.get(placed.order_id))?.approvalPolicy).toEqual(approvalPolicy);
    const raw = (policy: unknown) =>
      fetch(`${url}${INTERNAL_ORDERS_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [GATEWAY_SECRET_HEADER]: SECRET },
        body: JSON.stringify({
          request: JSON.stringify(request).replace('"250.5"', '250.5'),
          spiffeId: AGENT,
          traceId: 't',
          approvalPolicy: policy,
        }),
      });
    for (const bad of [
      { ...approvalPolicy, currency: 'EUR' },
      { ...approvalPolicy, approval_above: '100' },
      { ...approvalPolicy, subject: '' },
      'above 100',
    ]) {
      const res = await raw(bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(await res.json()).toEqual({ error: 'approvalPolicy is not an approval policy' });
    }
  });

  it('reports an unreachable domain as DomainUnavailable (the gateway answers 503)', async () => {
    const down = httpOrders('http://127.0.0.1:9', SECRET, 500);
    await expect(down.list(AGENT, { limit: 1 })).rejects.toBeInstanceOf(DomainUnavailable);
    await expect(down.cancel(`ord_${'e'.repeat(32)}`, AGENT)).rejects.toBeInstanceOf(DomainUnavailable);
    await down.close();
  });
});
