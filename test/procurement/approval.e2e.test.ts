/**
 * Human approval of agent orders (issue 22) end to end over real HTTP against the embedded
 * system (`npm start` in a test, PGlite): a spend policy with approvalAbove makes the gateway
 * answer 202 PENDING_APPROVAL with the amount reserved; operators with orders:approve approve or
 * reject through GraphQL; the expiry sweep, the agent's cancel, dual control, concurrent
 * decisions, the approval queue, signed webhooks of the approval events, and bad inputs.
 * Time is a ManualClock (noon UTC today); each case has its own sub-identity.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { ProcurementModule } from '../../subgraphs/procurement/index.ts';
import { startReceiver, waitFor } from '../webhooks/support.ts';
import { AGENT, freshAgent, ORDERS, post, type Reply, validOrder } from './support/agent.ts';
import { setApprovalPolicy } from './support/spend.ts';

const DAY = 86_400_000;
const TTL_SECONDS = 600;
const clock = new ManualClock(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
let sys: TestSystem;
let spendAdmin: string;
let alice: string;
let bob: string;

const procurement = () => sys.local.procurement as ProcurementModule;

const SET = `mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) { subject approvalAbove secondApprovalAbove } }`;
const APPROVE = `mutation($id: ID!, $note: String) { approvePurchaseOrder(orderId: $id, note: $note) {
  orderId status approvalsRequired approvals { operator note } decidedBy decisionReason } }`;
const REJECT = `mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) {
  orderId status decidedBy decisionReason } }`;
const QUEUE = `query($after: ID, $first: Int) { pendingApprovals(after: $after, first: $first) {
  nodes { order { orderId } agentId spiffeId amount approvalsRequired expiresAt policy { subject approvalAbove } remainingBudget }
  endCursor hasNextPage } }`;

const policy = (subject: string, over: Record<string, unknown> = {}) =>
  setApprovalPolicy(sys, spendAdmin, subject, over);
const order = (spiffe: string, amount: string) =>
  post(sys.url, { spiffe, body: JSON.stringify(validOrder()).replace('250.75', amount) });
async function read(spiffe: string, path: string): Promise<Reply> {
  const res = await fetch(`${sys.url}${path}`, { headers: { 'x-spiffe-id': spiffe } });
  const text = await res.text();
  return { status: res.status, headers: {}, text, json: JSON.parse(text) };
}
async function remaining(spiffe: string) {
  const p = (await read(spiffe, '/api/v2/procurement/spend')).json.current_period as Record<string, string>;
  return { spent: p.spent, remaining: p.remaining };
}
const approve = (id: unknown, token = alice, note?: string) =>
  sys.gql(APPROVE, { token, variables: { id, ...(note ? { note } : {}) } });
const reject = (id: unknown, reason: unknown, token = alice) =>
  sys.gql(REJECT, { token, variables: { id, reason } });
const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;
/** A pending order of a fresh agent under a policy (approval above 100.00). */
async function pendingOrder(label: string, amount = '250.75', over: Record<string, unknown> = {}) {
  const agent = freshAgent(label);
  await policy(agent, over);
  const r = await order(agent, amount);
  expect(r.status, r.text).toBe(202);
  return { agent, id: String(r.json.order_id), reply: r };
}
const changes = (orderId: string) =>
  sys.platform.db.query<{ from_status: string; to_status: string; actor: string; reason: string | null }>(
    'SELECT from_status, to_status, actor, reason FROM purchase_order_changes WHERE order_id = $1 ORDER BY seq',
    [orderId],
  );

beforeAll(async () => {
  sys = await startEmbedded(
    {
      ORDER_APPROVAL_TTL_SECONDS: String(TTL_SECONDS),
      // Long: the tests run the sweep themselves (runOnce), so they decide when time is up.
      ORDER_APPROVAL_SWEEP_MS: '3600000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      AGENT_SCOPE_POLICY: JSON.stringify({
        [AGENT]: ['orders:create', 'orders:read', 'orders:cancel', 'spend:read'],
      }),
    },
    { clock },
  );
  spendAdmin = await sys.token(['spend:admin']);
  alice = await sys.token(['orders:approve'], 'alice');
  bob = await sys.token(['orders:approve'], 'bob');
}, 60_000);
afterAll(() => sys?.close());

describe('an order above approvalAbove waits for an operator', () => {
  it('answers 202 PENDING_APPROVAL with the id, amount, expires_at and Location, and reserves the amount', async () => {
    const agent = freshAgent('pending');
    await policy(agent);
    const r = await order(agent, '250.75');
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ status: 'PENDING_APPROVAL', allocated_budget: 250.75 });
    expect(r.json.expires_at).toBe(new Date(clock.now() + TTL_SECONDS * 1000).toISOString());
    expect(r.headers.location).toBe(`${ORDERS}/${r.json.order_id}`);
    expect(await remaining(agent)).toEqual({ spent: '250.75', remaining: '749.25' });
    const back = await read(agent, r.headers.location as string);
    expect(back.status).toBe(200);
    expect(back.json).toEqual(r.json);
    const list = await read(agent, ORDERS);
    expect((list.json.orders as unknown[])[0]).toEqual(r.json);
  });

  it('answers 201 APPROVED at exactly approvalAbove (above is strict) and without a policy', async () => {
    const agent = freshAgent('at-threshold');
    await policy(agent);
    const at = await order(agent, '100.00');
    expect(at.status, at.text).toBe(201);
    expect(at.json.status).toBe('APPROVED');
    const free = await order(freshAgent('no-policy'), '4000');
    expect(free.status).toBe(201);
  });

  it('an Idempotency-Key replays the 202', async () => {
    const agent = freshAgent('replay');
    await policy(agent);
    const send = () =>
      post(sys.url, {
        spiffe: agent,
        headers: { 'idempotency-key': 'approval-replay-1' },
        body: JSON.stringify(validOrder()),
      });
    const a = await send();
    const b = await send();
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json).toEqual(a.json);
    expect(await remaining(agent)).toEqual({ spent: '250.75', remaining: '749.25' });
  });
});

describe('decisions (GraphQL, role orders:approve)', () => {
  it('approve: APPROVED, read back by the agent with the note, the amount stays spent, audited with the operator', async () => {
    const { agent, id } = await pendingOrder('approve');
    const r = await approve(id, alice, 'ok for Q3');
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data?.approvePurchaseOrder).toMatchObject({
      orderId: id,
      status: 'APPROVED',
      approvalsRequired: 1,
      approvals: [{ operator: 'alice', note: 'ok for Q3' }],
      decidedBy: 'alice',
      decisionReason: 'ok for Q3',
    });
    const back = await read(agent, `${ORDERS}/${id}`);
    expect(back.json).toMatchObject({ status: 'APPROVED', decision_reason: 'ok for Q3' });
    expect(back.json.expires_at).toBeUndefined();
    expect(await remaining(agent)).toEqual({ spent: '250.75', remaining: '749.25' });
    expect(await changes(id)).toEqual([
      { from_status: 'PENDING_APPROVAL', to_status: 'APPROVED', actor: 'alice', reason: 'ok for Q3' },
    ]);
  });

  it('reject: REJECTED with its reason, and the amount is back exactly', async () => {
    const { agent, id } = await pendingOrder('reject', '333.33');
    expect(await remaining(agent)).toEqual({ spent: '333.33', remaining: '666.67' });
    const r = await reject(id, 'not in this budget line');
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data?.rejectPurchaseOrder).toMatchObject({ status: 'REJECTED', decidedBy: 'alice' });
    expect(await remaining(agent)).toEqual({ spent: '0.00', remaining: '1000.00' });
    const back = await read(agent, `${ORDERS}/${id}`);
    expect(back.json).toMatchObject({ status: 'REJECTED', decision_reason: 'not in this budget line' });
    // Rejecting again (the same operator) is answered with the order and gives nothing back twice.
    const again = await reject(id, 'not in this budget line');
    expect(again.errors).toBeUndefined();
    expect(await remaining(agent)).toEqual({ spent: '0.00', remaining: '1000.00' });
    expect(await changes(id)).toHaveLength(1);
  });

  it('refuses callers without orders:approve, and anonymous ones', async () => {
    const { id } = await pendingOrder('roles');
    for (const token of [await sys.token(['orders:read', 'spend:admin']), '']) {
      const a = await approve(id, token);
      const r = await reject(id, 'no', token);
      const q = await sys.gql(QUEUE, { token });
      for (const x of [a, r, q]) expect(codeOf(x)).toBe(token ? 'FORBIDDEN' : 'UNAUTHENTICATED');
    }
    const still = await sys.gql(QUEUE, { token: alice, variables: { first: 200 } });
    const ids =
      (still.data?.pendingApprovals as { nodes: { order: { orderId: string } }[] } | undefined)?.nodes ?? [];
    expect(ids.map((n) => n.order.orderId)).toContain(id);
  });

  it('repeating the same approval is idempotent; another decision is refused naming the one taken', async () => {
    const { id } = await pendingOrder('repeat');
    expect((await approve(id, alice)).errors).toBeUndefined();
    const again = await approve(id, alice);
    expect(again.errors).toBeUndefined();
    expect(again.data?.approvePurchaseOrder).toMatchObject({ status: 'APPROVED' });
    for (const late of [await approve(id, bob), await reject(id, 'too late', bob)]) {
      expect(codeOf(late)).toBe('ORDER_ALREADY_DECIDED');
      expect(late.errors?.[0]?.extensions).toMatchObject({ decision: 'APPROVED', decidedBy: 'alice' });
      expect(late.status).toBeLessThan(500);
    }
  });

  it('concurrent decisions on one order: exactly one wins, the others name it', async () => {
    const { agent, id } = await pendingOrder('race');
    const tokens = await Promise.all(
      ['op-1', 'op-2', 'op-3', 'op-4', 'op-5', 'op-6'].map((s) => sys.token(['orders:approve'], s)),
    );
    const results = await Promise.all(
      tokens.map((t, i) => (i % 2 ? reject(id, `no ${i}`, t) : approve(id, t))),
    );
    const won = results.filter((r) => !r.errors);
    expect(won).toHaveLength(1);
    const final = (await read(agent, `${ORDERS}/${id}`)).json.status;
    for (const r of results.filter((x) => x.errors)) {
      expect(codeOf(r)).toBe('ORDER_ALREADY_DECIDED');
      expect(r.errors?.[0]?.extensions).toMatchObject({ decision: final });
    }
    expect(await changes(id)).toHaveLength(1);
    expect(await remaining(agent)).toEqual(
      final === 'APPROVED'
        ? { spent: '250.75', remaining: '749.25' }
        : { spent: '0.00', remaining: '1000.00' },
    );
  });
});

describe('dual control (secondApprovalAbove)', () => {
  it('needs two distinct operators above secondApprovalAbove; the same operator cannot approve twice', async () => {
    const { agent, id } = await pendingOrder('dual', '600.00', { secondApprovalAbove: '500.00' });
    const first = await approve(id, alice);
    expect(first.data?.approvePurchaseOrder).toMatchObject({
      status: 'PENDING_APPROVAL',
      approvalsRequired: 2,
    });
    expect((await read(agent, `${ORDERS}/${id}`)).json.status).toBe('PENDING_APPROVAL');
    const twice = await approve(id, alice);
    expect(codeOf(twice)).toBe('APPROVER_ALREADY_APPROVED');
    const second = await approve(id, bob, 'second pair of eyes');
    expect(second.data?.approvePurchaseOrder).toMatchObject({
      status: 'APPROVED',
      approvals: [
        { operator: 'alice', note: null },
        { operator: 'bob', note: 'second pair of eyes' },
      ],
      decidedBy: 'bob',
    });
    expect((await changes(id)).map((c) => [c.to_status, c.actor])).toEqual([
      ['PENDING_APPROVAL', 'alice'],
      ['APPROVED', 'bob'],
    ]);
  });

  it('between the thresholds one approval suffices', async () => {
    const { id } = await pendingOrder('dual-one', '400.00', { secondApprovalAbove: '500.00' });
    expect((await approve(id, alice)).data?.approvePurchaseOrder).toMatchObject({
      status: 'APPROVED',
      approvalsRequired: 1,
    });
  });
});

describe('expiry and the agent cancel', () => {
  it('expires a pending order after ORDER_APPROVAL_TTL_SECONDS and gives the amount back', async () => {
    const { agent, id } = await pendingOrder('expiry', '123.45');
    expect(await remaining(agent)).toEqual({ spent: '123.45', remaining: '876.55' });
    clock.advance(TTL_SECONDS * 1000 - 1);
    await procurement().approvalSweep.runOnce();
    expect((await read(agent, `${ORDERS}/${id}`)).json.status).toBe('PENDING_APPROVAL');
    clock.advance(1);
    // Not swept yet: deciding it now is refused as expired.
    const late = await approve(id, alice);
    expect(codeOf(late)).toBe('ORDER_NOT_PENDING');
    expect(late.errors?.[0]?.extensions).toMatchObject({ status: 'EXPIRED' });
    expect(await procurement().approvalSweep.runOnce()).toBeGreaterThanOrEqual(1);
    const back = await read(agent, `${ORDERS}/${id}`);
    expect(back.json.status).toBe('EXPIRED');
    expect(String(back.json.decision_reason)).toMatch(/^no decision before /);
    expect(await remaining(agent)).toEqual({ spent: '0.00', remaining: '1000.00' });
    expect((await changes(id)).map((c) => [c.to_status, c.actor])).toEqual([['EXPIRED', 'system']]);
    // A second pass (another replica's) finds nothing left to expire for this order.
    await procurement().approvalSweep.runOnce();
    expect(await changes(id)).toHaveLength(1);
  });

  it('the agent cancels its own pending order: CANCELLED, amount back, no decision any more', async () => {
    const { agent, id } = await pendingOrder('cancel', '222.22');
    const c = await post(sys.url, { spiffe: agent, path: `${ORDERS}/${id}/cancel`, body: '{}' });
    expect(c.status, c.text).toBe(200);
    expect(c.json.status).toBe('CANCELLED');
    expect(await remaining(agent)).toEqual({ spent: '0.00', remaining: '1000.00' });
    const late = await approve(id, alice);
    expect(codeOf(late)).toBe('ORDER_NOT_PENDING');
    expect(late.errors?.[0]?.extensions).toMatchObject({ status: 'CANCELLED' });
    expect((await changes(id)).map((c) => [c.to_status, c.actor])).toEqual([['CANCELLED', agent]]);
  });

  it('a rejected order cannot be cancelled (409 naming its status)', async () => {
    const { agent, id } = await pendingOrder('cancel-rejected');
    await reject(id, 'no');
    const c = await post(sys.url, { spiffe: agent, path: `${ORDERS}/${id}/cancel`, body: '{}' });
    expect(c.status).toBe(409);
    expect(c.json.order_status).toBe('REJECTED');
  });
});

describe('the approval queue', () => {
  it('lists pending orders oldest first with agent, policy and remaining budget, a page at a time', async () => {
    const agent = freshAgent('queue');
    await policy(agent);
    const ids: string[] = [];
    for (const amount of ['101.00', '102.00', '103.00']) {
      clock.advance(1000);
      ids.push(String((await order(agent, amount)).json.order_id));
    }
    const all: { order: { orderId: string }; amount: string; remainingBudget: string; policy: unknown }[] =
      [];
    let after: string | null = null;
    for (let page = 0; page < 100; page++) {
      const r = await sys.gql(QUEUE, { token: bob, variables: { first: 2, ...(after ? { after } : {}) } });
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      const c = r.data?.pendingApprovals as {
        nodes: typeof all;
        endCursor: string | null;
        hasNextPage: boolean;
      };
      all.push(...c.nodes);
      expect(c.hasNextPage).toBe(c.endCursor !== null);
      if (!c.hasNextPage) break;
      after = c.endCursor;
    }
    const mine = all.filter((n) => ids.includes(n.order.orderId));
    expect(mine.map((n) => n.order.orderId)).toEqual(ids);
    expect(mine[0]).toMatchObject({
      agentId: 'agent-0000001',
      spiffeId: agent,
      amount: '101.00',
      policy: { subject: agent, approvalAbove: '100.00' },
      remainingBudget: '694.00',
    });
  });
});

describe('approval events as signed webhooks', () => {
  it('delivers OrderApprovalRequested and OrderApproved to a subscribed endpoint, signed', async () => {
    const hook = await startReceiver([200]);
    try {
      const admin = await sys.token(['webhooks:admin']);
      const reg = await sys.gql(
        `mutation($url: String!, $types: [String!]!) { registerWebhookEndpoint(url: $url, eventTypes: $types) { signingSecret } }`,
        {
          token: admin,
          variables: { url: hook.url, types: [EventTypes.OrderApprovalRequested, EventTypes.OrderApproved] },
        },
      );
      expect(reg.errors, JSON.stringify(reg.errors)).toBeUndefined();
      const secret = String(
        (reg.data?.registerWebhookEndpoint as { signingSecret?: string } | undefined)?.signingSecret,
      );
      const { id } = await pendingOrder('webhook');
      await approve(id, alice, 'fine');
      const of = (type: string) =>
        hook.received.find((r) => JSON.parse(r.body).type === type && JSON.parse(r.body).subject === id);
      const approved = await waitFor('OrderApproved delivered', () => of(EventTypes.OrderApproved));
      const requested = await waitFor('OrderApprovalRequested delivered', () =>
        of(EventTypes.OrderApprovalRequested),
      );
      for (const r of [requested, approved]) {
        const h = r.headers as Record<string, string>;
        const at = new Date(Number(h['webhook-timestamp']) * 1000);
        expect(h['webhook-signature']?.split(' ')).toContain(
          new Webhook(secret).sign(h['webhook-id'] as string, at, r.body),
        );
      }
      expect(JSON.parse(approved.body).data).toMatchObject({
        order_id: id,
        status: 'APPROVED',
        allocated_budget: '250.75',
        approvals_required: 1,
        decided_by: 'alice',
        decision_reason: 'fine',
      });
    } finally {
      await hook.close();
    }
  });
});

describe('bad inputs are 4xx-class GraphQL errors, never 5xx', () => {
  const ok = 'ord_0123456789abcdef0123456789abcdef';
  it.each([
    ['approve: not an order id', APPROVE, { id: 'ord_x' }, 'BAD_USER_INPUT'],
    ['approve: SQL in the id', APPROVE, { id: "ord_'; DROP TABLE purchase_orders; --" }, 'BAD_USER_INPUT'],
    ['approve: unknown order', APPROVE, { id: ok }, 'NOT_FOUND'],
    ['approve: note too long', APPROVE, { id: ok, note: 'x'.repeat(1001) }, 'BAD_USER_INPUT'],
    ['approve: note with a control character', APPROVE, { id: ok, note: 'a\u0007b' }, 'BAD_USER_INPUT'],
    ['approve: id missing', APPROVE, {}, 'BAD_USER_INPUT'],
    ['approve: id of the wrong type', APPROVE, { id: { a: 1 } }, 'BAD_USER_INPUT'],
    ['reject: empty reason', REJECT, { id: ok, reason: '' }, 'BAD_USER_INPUT'],
    ['reject: blank reason', REJECT, { id: ok, reason: '   ' }, 'BAD_USER_INPUT'],
    ['reject: reason missing', REJECT, { id: ok }, 'BAD_USER_INPUT'],
    ['reject: reason too long', REJECT, { id: ok, reason: 'x'.repeat(1001) }, 'BAD_USER_INPUT'],
    ['reject: unknown order', REJECT, { id: ok, reason: 'no' }, 'NOT_FOUND'],
    ['queue: first 0', QUEUE, { first: 0 }, 'BAD_USER_INPUT'],
    ['queue: first 201', QUEUE, { first: 201 }, 'BAD_USER_INPUT'],
    ['queue: first negative', QUEUE, { first: -1 }, 'BAD_USER_INPUT'],
    ['queue: a forged cursor', QUEUE, { after: 'not-a-cursor' }, 'BAD_USER_INPUT'],
  ])('%s', async (_label, query, variables, code) => {
    const r = await sys.gql(query, { token: alice, variables });
    expect(r.status).toBeLessThan(500);
    expect(codeOf(r), JSON.stringify(r.errors)).toBe(code);
  });

  it('deciding an order that never needed approval is ORDER_NOT_PENDING', async () => {
    const agent = freshAgent('never-pending');
    const placed = await order(agent, '10.00');
    expect(placed.status).toBe(201);
    const r = await approve(placed.json.order_id, alice);
    expect(codeOf(r)).toBe('ORDER_NOT_PENDING');
    expect(r.errors?.[0]?.extensions).toMatchObject({ status: 'APPROVED' });
  });

  it.each([
    ['approvalAbove as exponent text', { approvalAbove: '1e3' }, '/approvalAbove'],
    ['approvalAbove with 3 decimals', { approvalAbove: '10.001' }, '/approvalAbove'],
    ['approvalAbove zero', { approvalAbove: '0' }, '/approvalAbove'],
    [
      'secondApprovalAbove below approvalAbove',
      { approvalAbove: '100', secondApprovalAbove: '99.99' },
      '/secondApprovalAbove',
    ],
    [
      'secondApprovalAbove without approvalAbove',
      { approvalAbove: null, secondApprovalAbove: '200' },
      '/secondApprovalAbove',
    ],
  ])('setSpendPolicy refuses %s', async (_label, over, pointer) => {
    const r = await sys.gql(SET, {
      token: spendAdmin,
      variables: {
        input: { subject: freshAgent('bad'), currency: 'USD', period: 'DAY', budget: '1000', ...over },
      },
    });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    const errors =
      (r.errors?.[0]?.extensions as { errors?: { pointer: string }[] } | undefined)?.errors ?? [];
    expect(errors.map((e) => e.pointer)).toContain(pointer);
  });
});
