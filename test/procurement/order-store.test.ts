/**
 * One contract suite for the order store, against both adapters: memory (benchmarks) and SQL
 * on the real Postgres (a fresh schema). The embedded SQL store (PGlite) runs the same SQL
 * and is exercised end to end by orders.e2e.test.ts. Also the domain's pure approval.
 */
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signApprovalRecord, verifyApprovalRecord } from '../../lib/ap2/approval-record.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { UsdAmount } from '../../subgraphs/procurement/contract/types.ts';
import { createOrderDomain, newOrderId } from '../../subgraphs/procurement/domain/order-domain.ts';
import {
  approve,
  OrderIdConflict,
  type PurchaseOrder,
  toResponse,
} from '../../subgraphs/procurement/domain/purchase-order.ts';
import { orderEvent } from '../../subgraphs/procurement/outbox/order-events.ts';
import { memoryOrderStore } from '../../subgraphs/procurement/store/memory.ts';
import { sqlOrderStore } from '../../subgraphs/procurement/store/sql.ts';
import type { OrderStore } from '../../subgraphs/procurement/store/store.ts';
import { type OrderDbs, openOrderDbs } from '../support/order-stores.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
/** Amounts are exact decimal text inside the system (what the contract makes of a JSON number). */
const usd = (text: string) => text as UsdAmount;
const request = (over: Partial<{ agent_id: string; quantity: number; max_budget_usd: UsdAmount }> = {}) =>
  Object.freeze({
    agent_id: 'agent-0000001',
    sku: 'SKU-ABC-123456',
    quantity: 3,
    max_budget_usd: usd('99.99'),
    ...over,
  });

describe('approve (pure)', () => {
  it('approves with the whole budget allocated and fractional Unix seconds', () => {
    const o = approve({ request: request(), spiffeId: AGENT, traceId: 't' }, 'ord_1', 1_767_225_600_123);
    expect(toResponse(o)).toEqual({
      status: 'APPROVED',
      order_id: 'ord_1',
      allocated_budget: '99.99',
      processed_at: 1_767_225_600.123,
    });
    expect(Object.isFrozen(o)).toBe(true);
  });
});

let dbs: OrderDbs;
let db: Db;
let lite: Db;
beforeAll(async () => {
  dbs = await openOrderDbs('orders');
  ({ db, lite } = dbs);
});
afterAll(() => dbs?.close());

const adapters: [string, () => OrderStore][] = [
  ['memory', () => memoryOrderStore()],
  ['sql (Postgres)', () => sqlOrderStore(db)],
  ['sql (embedded PGlite)', () => sqlOrderStore(lite)],
];

const sqlStores: [string, () => Db][] = [
  ['Postgres', () => db],
  ['embedded PGlite', () => lite],
];

describe.each(sqlStores)('exact money in the %s store (numeric)', (_name, dbOf) => {
  it.each(['0.01', '0.1', '1', '99.99', '250.75', '1000', '4999.99', '5000'])(
    'stores %s and reads it back digit for digit',
    async (amount) => {
      const domain = createOrderDomain(sqlOrderStore(dbOf()), new ManualClock());
      const created = await domain.place({
        request: request({ max_budget_usd: usd(amount) }),
        spiffeId: AGENT,
        traceId: 'exact',
      });
      expect(created.allocated_budget).toBe(amount);
      expect((await domain.get(created.order_id))?.allocatedBudget).toBe(amount);
      const [row] = await dbOf().query<{ t: string }>(
        'SELECT allocated_budget::text AS t FROM purchase_orders WHERE order_id = $1',
        [created.order_id],
      );
      expect(row?.t).toBe(amount);
    },
  );

  it.each([
    ['a sub-cent amount', '0.001'],
    ['a sub-cent amount near the limit', '4999.999'],
    ['more than 5000', '5000.01'],
    ['zero', '0'],
  ])('refuses %s (%s) even from a caller that skipped the contract', async (_what, amount) => {
    const domain = createOrderDomain(sqlOrderStore(dbOf()), new ManualClock());
    await expect(
      domain.place({ request: request({ max_budget_usd: usd(amount) }), spiffeId: AGENT, traceId: 'x' }),
    ).rejects.toThrow();
  });
});

describe.each(adapters)('order store, %s adapter', (_name, make) => {
  it('rehearses an order (the warm-up, issue 48): answered as placed, nothing stored, nothing counted', async () => {
    const s = make();
    let committed = 0;
    const domain = createOrderDomain(s, new ManualClock(), {
      cancelWindowMs: 1000,
      committed: () => void committed++,
    });
    const cmd = { request: request(), spiffeId: AGENT, traceId: 'warm-up' } as const;
    // Several at once: the rehearsal batches as real orders do (one statement per batch).
    const ids = Array.from({ length: 3 }, () => newOrderId());
    const answers = await Promise.all(
      ids.map((orderId) => domain.place({ ...cmd, orderId, rehearsal: true })),
    );
    expect(answers.map((a) => a.order_id)).toEqual(ids);
    for (const id of ids) expect(await domain.get(id)).toBeNull();
    expect(domain.placed()).toBe(0);
    expect(committed).toBe(0);
    // The statement really ran: rehearsing the id of a stored order finds it (ON CONFLICT).
    const stored = await domain.place({ ...cmd, orderId: newOrderId() });
    await expect(domain.place({ ...cmd, orderId: stored.order_id, rehearsal: true })).resolves.toEqual(
      stored,
    );
    expect(domain.placed()).toBe(1);
  });

  it('stores an order and reads back exactly what was stored', async () => {
    const s = make();
    const domain = createOrderDomain(s, new ManualClock(1_767_225_600_500));
    const created = await domain.place({
      request: request({ max_budget_usd: usd('4999.99') }),
      spiffeId: AGENT,
      traceId: 'tr',
    });
    const back = await domain.get(created.order_id);
    expect(back).toMatchObject({
      orderId: created.order_id,
      status: 'APPROVED',
      agentId: 'agent-0000001',
      spiffeId: AGENT,
      sku: 'SKU-ABC-123456',
      quantity: 3,
      allocatedBudget: '4999.99',
      processedAt: 1_767_225_600.5,
      traceId: 'tr',
    });
    expect(await domain.get('ord_missing')).toBeNull();
  });

  it('lists newest first, by agent, within the limit', async () => {
    const s = make();
    const clock = new ManualClock();
    const domain = createOrderDomain(s, clock);
    const agent = `agent-${Math.random().toString(36).slice(2, 12)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++, clock.advance(1))
      ids.push(
        (
          await domain.place({
            request: request({ agent_id: agent, quantity: i + 1 }),
            spiffeId: AGENT,
            traceId: 't',
          })
        ).order_id,
      );
    await domain.place({ request: request(), spiffeId: AGENT, traceId: 't' });
    const listed = await domain.list({ agentId: agent, limit: 3 });
    expect(listed.orders.map((o) => o.orderId)).toEqual(ids.reverse().slice(0, 3));
  });

  it('tells whether it inserted: true once per order id, false for an id that exists, also within one batch', async () => {
    const s = make();
    const id = newOrderId();
    const cmd = { request: request(), spiffeId: AGENT, traceId: 't' };
    const insert = (o: PurchaseOrder) => s.insert(o, orderEvent(EventTypes.OrderPlaced, o, 0));
    const first = approve(cmd, id, 1_767_225_600_000);
    expect(await insert(first)).toBe(true);
    expect(await insert({ ...first, quantity: 7 })).toBe(false);
    expect((await s.get(id))?.quantity).toBe(3);
    // Written together (one group commit on SQL): the first item of the id is the one stored.
    const twin = approve(cmd, newOrderId(), 1_767_225_600_000);
    const both = await Promise.all([
      insert(twin),
      insert({ ...twin, quantity: 9 }),
      insert(approve(cmd, newOrderId(), 1_767_225_600_000)),
    ]);
    expect(both).toEqual([true, false, true]);
    expect((await s.get(twin.orderId))?.quantity).toBe(3);
  });

  it('places a given order id with one store call and reads it only when the id existed', async () => {
    const s = make();
    const reads: string[] = [];
    const counted: OrderStore = {
      ...s,
      get: (orderId) => {
        reads.push(orderId);
        return s.get(orderId);
      },
    };
    const domain = createOrderDomain(counted, new ManualClock());
    const orderId = newOrderId();
    const cmd = { request: request(), spiffeId: AGENT, traceId: 't', orderId };
    const created = await domain.place(cmd);
    expect(reads).toEqual([]);
    expect(await domain.place({ ...cmd, traceId: 'retry' })).toEqual(created);
    expect(reads).toEqual([orderId]);
    await expect(domain.place({ ...cmd, request: request({ quantity: 4 }) })).rejects.toThrow(
      OrderIdConflict,
    );
    await expect(domain.place({ ...cmd, spiffeId: `${AGENT}/other` })).rejects.toThrow(OrderIdConflict);
    expect(domain.placed()).toBe(1);
  });

  it('keeps every one of many concurrent orders (group commit)', async () => {
    const s = make();
    const domain = createOrderDomain(s, new ManualClock());
    const agent = `agent-${Math.random().toString(36).slice(2, 12)}`;
    const created = await Promise.all(
      Array.from({ length: 250 }, () =>
        domain.place({ request: request({ agent_id: agent }), spiffeId: AGENT, traceId: 't' }),
      ),
    );
    expect(new Set(created.map((c) => c.order_id)).size).toBe(250);
    expect((await domain.list({ agentId: agent, limit: 500 })).orders).toHaveLength(250);
  });
});

describe.each(adapters)('approval evidence in the %s store (issue 50)', (_name, make) => {
  it('keeps the policy that applied at placement and the signed decision, and reads them back', async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256' };
    const domain = createOrderDomain(make(), new ManualClock(1_767_225_600_000), {
      cancelWindowMs: 60_000,
      signApproval: async (r) => (await signApprovalRecord(r, { kid: 'k1', key: key.privateKey })).jws,
    });
    const approvalPolicy = { subject: AGENT, currency: 'USD', approval_above: '50.00' };
    const placed = await domain.place({
      request: request(),
      spiffeId: AGENT,
      traceId: 't',
      approvalsRequired: 1,
      approvalPolicy,
    });
    const pending = await domain.get(placed.order_id);
    expect(pending?.approvalPolicy).toEqual(approvalPolicy);
    expect(pending?.approvalRecord).toBeUndefined();
    const d = await domain.decide(placed.order_id, { kind: 'approve', operator: 'alice', note: null });
    expect(d.kind).toBe('decided');
    const stored = await domain.get(placed.order_id);
    expect(stored?.approvalRecord).toBe(d.kind === 'decided' ? d.order.approvalRecord : 'none');
    const v = await verifyApprovalRecord(stored?.approvalRecord, [jwk], placed.order_id);
    expect(v.ok && v.record).toMatchObject({
      decision: 'approved',
      amount: '99.99',
      approvals: [{ operator: 'alice' }],
    });
    // An order placed without a policy reads as orders did before the columns existed.
    const plain = await domain.get(
      (await domain.place({ request: request(), spiffeId: AGENT, traceId: 't' })).order_id,
    );
    expect(plain && 'approvalPolicy' in plain).toBe(false);
    expect(plain && 'approvalRecord' in plain).toBe(false);
  });
});

describe('sql order store, failures', () => {
  it('rejects every order of a failed batch and stores none of them', async () => {
    const lost = async () => Promise.reject(new Error('connection lost'));
    const failing: Db = { ...db, query: lost, transaction: lost };
    const domain = createOrderDomain(sqlOrderStore(failing), new ManualClock());
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => domain.place({ request: request(), spiffeId: AGENT, traceId: 'x' })),
    );
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
  });

  it('refuses rows that break the contract even if a caller skipped the gateway (CHECK constraints)', async () => {
    const domain = createOrderDomain(sqlOrderStore(db), new ManualClock());
    await expect(
      domain.place({ request: request({ quantity: 101 }), spiffeId: AGENT, traceId: 'x' }),
    ).rejects.toThrow();
  });
});

describe('groupCommit', () => {
  it('writes queued items together, never more batches at once than allowed, in order', async () => {
    const { groupCommit } = await import('../../lib/db/group-commit.ts');
    let inFlight = 0;
    let maxInFlight = 0;
    const written: number[][] = [];
    const add = groupCommit<number, number>(
      async (batch) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        written.push([...batch]);
        inFlight--;
        return batch.map((n) => -n);
      },
      { maxBatch: 10, concurrency: 2 },
    );
    // Each caller gets its own item's outcome, whichever batch it was written in.
    expect(await Promise.all(Array.from({ length: 95 }, (_, i) => add(i)))).toEqual(
      Array.from({ length: 95 }, (_, i) => -i),
    );
    expect(maxInFlight).toBeLessThanOrEqual(2);
    expect(written.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 95 }, (_, i) => i));
    expect(written.length).toBeLessThan(95);
    expect(Math.max(...written.map((b) => b.length))).toBeLessThanOrEqual(10);
  });
});
