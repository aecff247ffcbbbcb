/**
 * ACP sessions against the spend policy, the approval flow and time, on the embedded system:
 * concurrent completions against one budget, a session above approvalAbove, expiry. Every
 * response validates against the vendored bundle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { acp, expectError, expectSession, issueKey, totalOf } from './support/acp.ts';

const SET = `mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject } }`;
const APPROVE = `mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { orderId status } }`;
const REJECT = `mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) { orderId status } }`;

let sys: TestSystem;
let n = 0;

beforeAll(async () => {
  // Sessions expire after 2 s here, so one can be seen expiring.
  sys = await startEmbedded({ ACP_SESSION_TTL_SECONDS: '2' });
});
afterAll(() => sys?.close());

/** A platform of its own: its own identity, so its own spend policy, block and bucket. */
async function platform(policy?: Record<string, string>) {
  const spiffeId = `spiffe://example.org/ns/ai/sa/procurement-agent/acp-life-${++n}`;
  if (policy) {
    const r = await sys.gql(SET, {
      token: await sys.token(['spend:admin']),
      variables: { input: { subject: spiffeId, currency: 'USD', period: 'DAY', ...policy } },
    });
    expect(r.errors).toBeUndefined();
  }
  const { key } = await issueKey(sys, { spiffeId });
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    acp(sys.url, key, method, path, body);
  const open = async (quantity = 1) =>
    expectSession(
      await call('POST', '/checkout_sessions', {
        currency: 'usd',
        capabilities: {},
        line_items: [{ id: 'SKU-ABC-000001', quantity }],
      }),
      201,
    );
  const complete = (id: unknown) =>
    call('POST', `/checkout_sessions/${id}/complete`, {
      payment_data: { purchase_order_number: `PO-${id}` },
    });
  return { call, open, complete };
}

describe('spend policy', () => {
  it('completes exactly as many of ten concurrent sessions as the budget covers, never more', async () => {
    const probe = await platform();
    const unit = totalOf(await probe.open()) as number;
    // Room for three sessions of one unit and a little more, not four.
    const budget = ((unit * 3 + Math.floor(unit / 2)) / 100).toFixed(2);
    const p = await platform({ budget });
    const sessions = await Promise.all(Array.from({ length: 10 }, () => p.open()));
    const results = await Promise.all(sessions.map((s) => p.complete(s.id)));
    const bodies = results.map((r) => expectSession(r));
    expect(bodies.filter((b) => b.status === 'completed')).toHaveLength(3);
    const refused = bodies.filter((b) => b.status !== 'completed');
    expect(refused).toHaveLength(7);
    for (const b of refused) {
      expect(b.status).toBe('not_ready_for_payment');
      expect(b.messages).toContainEqual(expect.objectContaining({ type: 'error', code: 'maximum_exceeded' }));
    }
  });

  it('completes for an agent no spend policy covers (SPEND_POLICY_DEFAULT=allow, the default)', async () => {
    const p = await platform();
    const s = await p.open();
    expect(expectSession(await p.complete(s.id)).status).toBe('completed');
  });
});

describe('approval', () => {
  it('holds a session above approvalAbove as pending_approval; approved it is completed', async () => {
    const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
    const s = await p.open();
    const pending = expectSession(await p.complete(s.id));
    expect(pending.status).toBe('pending_approval');
    const order = pending.order as { id: string; status: string };
    expect(order.status).toBe('manual_review');
    const r = await sys.gql(APPROVE, {
      token: await sys.token(['orders:approve'], 'alice'),
      variables: { id: order.id },
    });
    expect(r.errors).toBeUndefined();
    const after = expectSession(await p.call('GET', `/checkout_sessions/${s.id}`));
    expect(after.status).toBe('completed');
    expect((after.order as { status: string }).status).toBe('confirmed');
  });

  it('cancels a pending session whose order an operator rejects, naming the decision', async () => {
    const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
    const s = await p.open();
    const pending = expectSession(await p.complete(s.id));
    const orderId = (pending.order as { id: string }).id;
    const r = await sys.gql(REJECT, {
      token: await sys.token(['orders:approve'], 'bob'),
      variables: { id: orderId, reason: 'not this quarter' },
    });
    expect(r.errors).toBeUndefined();
    const after = expectSession(await p.call('GET', `/checkout_sessions/${s.id}`));
    expect(after.status).toBe('canceled');
    expect(JSON.stringify(after.messages)).toContain('not this quarter');
  });

  it('lets the agent withdraw a pending session: the order is cancelled with it', async () => {
    const p = await platform({ budget: '100000.00', approvalAbove: '0.01' });
    const s = await p.open();
    expectSession(await p.complete(s.id));
    const canceled = expectSession(await p.call('POST', `/checkout_sessions/${s.id}/cancel`, {}));
    expect(canceled.status).toBe('canceled');
  });
});

describe('time', () => {
  it('expires a session left alone; it can no longer be completed', async () => {
    const p = await platform();
    const s = await p.open();
    await new Promise((r) => setTimeout(r, 2100));
    const read = expectSession(await p.call('GET', `/checkout_sessions/${s.id}`));
    expect(read.status).toBe('expired');
    expectError(await p.complete(s.id), 405, 'session_expired');
  });
});
