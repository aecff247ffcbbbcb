/**
 * The metrics the alerts and the dashboard read (docs/slos.md, docs/runbooks.md), provoked on
 * the real embedded system and read from its /metrics over HTTP: a block, spend refusals, an
 * approval waiting then decided, webhook deliveries delivered and dead, an audit verification,
 * the store's reachability.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import { acp, issueKey } from '../acp/support/acp.ts';
import { type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';
import { sampleSum, scrape } from './exposition.ts';

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const SET_POLICY = `mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }`;
const APPROVE = `mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }`;
const REGISTER = `mutation ($url: String!, $types: [String!]!) {
  registerWebhookEndpoint(url: $url, eventTypes: $types) { endpoint { endpointId } }
}`;

let sys: TestSystem;
let hook: Receiver;

beforeAll(async () => {
  sys = await startEmbedded({
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_MAX_ATTEMPTS: '1',
    WEBHOOK_TIMEOUT_MS: '400',
    WEBHOOK_POLL_INTERVAL_MS: '100',
  });
  hook = await startReceiver([200]);
});
afterAll(async () => {
  await hook?.close();
  await sys?.close();
});

const order = (agent: string, body: unknown) =>
  fetch(`${sys.url}/v2/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': agent },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const valid = (budget: number) => ({
  agent_id: 'agent-0000001',
  sku: 'SKU-ABC-000001',
  quantity: 1,
  max_budget_usd: budget,
});
async function policy(subject: string, p: Record<string, unknown>) {
  const token = await sys.token(['spend:admin']);
  const r = await sys.gql(SET_POLICY, {
    token,
    variables: { p: { subject, currency: 'USD', period: 'DAY', ...p } },
  });
  expect(r.errors).toBeUndefined();
}

describe('/metrics of the embedded system', () => {
  it('declares every family the rules and the dashboard read, with their closed label sets present at zero', async () => {
    const m = await scrape(sys.url);
    for (const reason of ['budget', 'per-order', 'expired', 'sku-not-allowed', 'no-policy'])
      expect(
        m.samples.some((s) => s.name === 'agent_spend_refusals_total' && s.labels.reason === reason),
      ).toBe(true);
    expect(sampleSum(m, 'agent_blocks_total')).toBe(0);
    expect(sampleSum(m, 'audit_log_truncated')).toBe(0);
    expect(sampleSum(m, 'procurement_pending_approvals')).toBe(0);
    expect(sampleSum(m, 'edge_dependency_breaker_open', { dependency: 'pricing' })).toBe(0);
    expect(sampleSum(m, 'dependency_up', { dependency: 'embedded_db' })).toBe(1);
    expect(m.families.get('webhook_delivery_seconds')).toBe('histogram');
    expect(m.families.get('procurement_approval_decision_seconds')).toBe('histogram');
  });

  it('counts a block once, when the sixth refused body starts it', async () => {
    const agent = `${AGENT}/metrics-block`;
    for (let i = 0; i < 6; i++) expect((await order(agent, { agent_id: 'x' })).status).toBe(422);
    expect((await order(agent, valid(10))).status).toBe(429);
    const m = await scrape(sys.url);
    expect(sampleSum(m, 'agent_blocks_total')).toBe(1);
    expect(
      sampleSum(m, 'http_request_duration_seconds_count', { route: '/v2/orders', status: '422' }),
    ).toBeGreaterThanOrEqual(6);
  });

  it('counts spend refusals by reason', async () => {
    const agent = `${AGENT}/metrics-spend`;
    await policy(agent, { budget: '100.00', maxPerOrder: '50.00', allowedSkuPrefixes: ['SKU-ABC-'] });
    expect((await order(agent, valid(60))).status).toBe(403);
    expect((await order(agent, { ...valid(10), sku: 'SKU-ELC-000004' })).status).toBe(403);
    expect((await order(agent, valid(40))).status).toBe(201);
    expect((await order(agent, valid(40))).status).toBe(201);
    expect((await order(agent, valid(40))).status).toBe(403);
    const m = await scrape(sys.url);
    expect(sampleSum(m, 'agent_spend_refusals_total', { reason: 'per-order' })).toBe(1);
    expect(sampleSum(m, 'agent_spend_refusals_total', { reason: 'sku-not-allowed' })).toBe(1);
    expect(sampleSum(m, 'agent_spend_refusals_total', { reason: 'budget' })).toBe(1);
  });

  it('counts an ACP completion refused for a line the policy does not allow, decided before the ledger', async () => {
    const agent = `${AGENT}/metrics-acp`;
    await policy(agent, { budget: '1000.00', allowedSkuPrefixes: ['SKU-ABC-'] });
    const before = sampleSum(await scrape(sys.url), 'agent_spend_refusals_total', {
      reason: 'sku-not-allowed',
    });
    const { key } = await issueKey(sys, { spiffeId: agent });
    const created = await acp(sys.url, key, 'POST', '/checkout_sessions', {
      currency: 'usd',
      capabilities: {},
      line_items: [
        { id: 'SKU-ABC-000001', quantity: 1 },
        { id: 'SKU-ELC-000004', quantity: 1 },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const done = await acp(sys.url, key, 'POST', `/checkout_sessions/${created.body.id}/complete`, {
      payment_data: { purchase_order_number: 'PO-METRICS-1', payment_terms: 'net_30' },
    });
    // ACP answers the session back, not completed, with the refusal as an error message.
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.status).toBe('not_ready_for_payment');
    expect(JSON.stringify(done.body.messages)).toContain('the spend policy does not allow SKU-ELC-000004');
    const after = sampleSum(await scrape(sys.url), 'agent_spend_refusals_total', {
      reason: 'sku-not-allowed',
    });
    expect(after - before).toBe(1);
  });

  it('shows a pending approval and its age, then its decision time once approved', async () => {
    const agent = `${AGENT}/metrics-approval`;
    await policy(agent, { budget: '1000.00', approvalAbove: '100.00' });
    const placed = await order(agent, valid(250));
    expect(placed.status).toBe(202);
    const { order_id: id } = (await placed.json()) as { order_id: string };
    await new Promise((r) => setTimeout(r, 1100));
    let m = await scrape(sys.url);
    expect(sampleSum(m, 'procurement_pending_approvals')).toBe(1);
    expect(sampleSum(m, 'procurement_pending_approval_oldest_age_seconds')).toBeGreaterThanOrEqual(1);
    const r = await sys.gql(APPROVE, {
      token: await sys.token(['orders:approve'], 'alice'),
      variables: { id },
    });
    expect(r.errors).toBeUndefined();
    m = await scrape(sys.url);
    expect(sampleSum(m, 'procurement_pending_approvals')).toBe(0);
    expect(sampleSum(m, 'procurement_pending_approval_oldest_age_seconds')).toBe(0);
    expect(sampleSum(m, 'procurement_approval_decision_seconds_count', { decision: 'approved' })).toBe(1);
    // It waited about a second: in the 60 s bucket, not in any below 1 s.
    expect(
      sampleSum(m, 'procurement_approval_decision_seconds_bucket', { decision: 'approved', le: '60' }),
    ).toBe(1);
  });

  it('times a delivered webhook and counts a dead one (a closed port, one attempt allowed)', async () => {
    const token = await sys.token(['webhooks:admin']);
    for (const url of [hook.url, 'http://127.0.0.1:9/closed']) {
      const r = await sys.gql(REGISTER, { token, variables: { url, types: [EventTypes.OrderPlaced] } });
      expect(r.errors).toBeUndefined();
    }
    expect((await order(`${AGENT}/metrics-webhook`, valid(5))).status).toBe(201);
    const m = await waitFor('both deliveries finished', async () => {
      const e = await scrape(sys.url);
      return sampleSum(e, 'webhook_delivery_seconds_count') >= 2 ? e : undefined;
    });
    expect(sampleSum(m, 'webhook_delivery_seconds_count', { outcome: 'delivered' })).toBe(1);
    expect(sampleSum(m, 'webhook_delivery_seconds_count', { outcome: 'dead' })).toBe(1);
    expect(sampleSum(m, 'webhook_delivery_seconds_bucket', { outcome: 'delivered', le: '60' })).toBe(1);
    expect(sampleSum(m, 'webhook_attempts_total', { outcome: 'failed' })).toBe(1);
  });

  it('counts an audit verification by its result', async () => {
    const token = await sys.token(['audit:read']);
    const res = await fetch(`${sys.url}/api/v2/operator/audit/verify`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const m = await scrape(sys.url);
    expect(sampleSum(m, 'audit_verifications_total', { result: 'ok' })).toBe(1);
    expect(sampleSum(m, 'audit_log_truncated')).toBe(0);
  });
});
