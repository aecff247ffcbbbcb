/**
 * Spend policies end to end over real HTTP against the embedded system (`npm start` in a
 * test): operators set them with the role-restricted GraphQL mutation, the agent chain enforces
 * them (403 with its own problem type, nothing stored, audited) and the agent reads its own at
 * GET /api/v2/procurement/spend. Time is a ManualClock; each case has its own sub-identity.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { ManualClock } from '../../lib/clock.ts';
import { procurementOpenApi } from '../../subgraphs/procurement/contract/openapi.ts';
import type { ProcurementModule } from '../../subgraphs/procurement/index.ts';
import { AGENT, freshAgent, post, type Reply, validOrder } from './support/agent.ts';
import { type FaultyDb, faultyDb } from './support/faulty-db.ts';

const SPEND = '/api/v2/procurement/spend';
const NO_SPEND_READ = `${AGENT}/no-spend-read`;
const DAY = 86_400_000;
// Noon UTC, so a few hours' advance stays in the same day.
const clock = new ManualClock(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
let sys: TestSystem;
let db: FaultyDb;
let admin: string;

const procurement = () => sys.local.procurement as ProcurementModule;
const placed = () => procurement().api.placed();
const nextMidnight = () => Math.floor(clock.now() / DAY) * DAY + DAY;

const SET = `mutation($input: SpendPolicyInput!) { setSpendPolicy(input: $input) {
  subject period budget maxPerOrder expiresAt allowedSkuPrefixes currentPeriod { spent remaining resetsAt } } }`;
async function setPolicy(input: Record<string, unknown>, token = admin) {
  return sys.gql(SET, { token, variables: { input: { currency: 'USD', period: 'DAY', ...input } } });
}
const order = (spiffe: string, budget: string, over: { sku?: string; key?: string; trace?: string } = {}) =>
  post(sys.url, {
    spiffe,
    body: JSON.stringify(validOrder({ sku: over.sku ?? 'SKU-ELC-000001' })).replace('250.75', budget),
    headers: {
      ...(over.key ? { 'idempotency-key': over.key } : {}),
      ...(over.trace ? { 'x-trace-id': over.trace } : {}),
    },
  });
async function readSpend(spiffe: string | null): Promise<Reply> {
  const res = await fetch(`${sys.url}${SPEND}`, { headers: spiffe ? { 'x-spiffe-id': spiffe } : {} });
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: res.status, headers, text, json: JSON.parse(text) };
}
const auditReason = async (traceId: string) => {
  for (let i = 0; i < 100; i++) {
    const rows = await sys.platform.db.query<{ reason: string; status: number }>(
      'SELECT reason, status FROM agent_audit_log WHERE trace_id = $1',
      [traceId],
    );
    if (rows[0]) return rows[0];
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
};
// Replies are checked against the schemas the OpenAPI document gives agents.
const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: 'procurement.yaml', components: procurementOpenApi().components });
const documented = (name: string, body: unknown) => {
  const validate = ajv.getSchema(`procurement.yaml#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
};
const expectSpendProblem = (r: Reply, type: string) => {
  expect(r.status, r.text).toBe(403);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(String(r.json.type)).toBe(`https://agent-commerce.example/problems/${type}`);
  documented('SpendProblem', r.json);
};

beforeAll(async () => {
  db = await faultyDb();
  sys = await startEmbedded(
    {
      AGENT_SCOPE_POLICY: JSON.stringify({
        [AGENT]: ['orders:create', 'orders:cancel', 'spend:read'],
        [NO_SPEND_READ]: ['orders:create'],
      }),
    },
    { clock, db },
  );
  admin = await sys.token(['spend:admin']);
}, 60_000);
afterAll(async () => {
  await sys.close();
  await db.close();
});

describe('managing policies (GraphQL)', () => {
  it('refuses setSpendPolicy without a token, and with only spend:read', async () => {
    const id = freshAgent('gql-auth');
    const anonymous = await setPolicy({ subject: id, budget: '10.00' }, '');
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const reader = await setPolicy({ subject: id, budget: '10.00' }, await sys.token(['spend:read']));
    expect(reader.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const read = await sys.gql(`{ spendPolicy(subject: "${id}") { subject } }`, {
      token: await sys.token(['spend:read']),
    });
    expect(read.errors).toBeUndefined();
    expect(read.data?.spendPolicy).toBeNull();
  });

  it('sets a policy and reads it back with its current period', async () => {
    const id = freshAgent('gql-set');
    const r = await setPolicy({
      subject: id,
      budget: '2000.5',
      maxPerOrder: '300',
      period: 'MONTH',
      expiresAt: new Date(clock.now() + 30 * DAY).toISOString(),
      allowedSkuPrefixes: ['SKU-ELC-'],
    });
    expect(r.errors).toBeUndefined();
    expect(r.data?.setSpendPolicy).toMatchObject({
      subject: id,
      period: 'MONTH',
      budget: '2000.50',
      maxPerOrder: '300.00',
      allowedSkuPrefixes: ['SKU-ELC-'],
      currentPeriod: { spent: '0.00', remaining: '2000.50' },
    });
    const listed = await sys.gql('query($a: ID) { spendPolicies(after: $a, first: 1) { subject budget } }', {
      token: admin,
      variables: { a: id.slice(0, -1) },
    });
    expect(listed.data?.spendPolicies).toEqual([{ subject: id, budget: '2000.50' }]);
    const effective = await sys.gql(`{ effectiveSpendPolicy(spiffeId: "${id}/sub") { subject } }`, {
      token: admin,
    });
    expect(effective.data?.effectiveSpendPolicy).toEqual({ subject: id });
    const del = await sys.gql(`mutation { deleteSpendPolicy(subject: "${id}") }`, { token: admin });
    expect(del.data?.deleteSpendPolicy).toBe(true);
  });

  it.each([
    ['a subject that is not a SPIFFE ID', { subject: 'agent-7' }, '/subject'],
    ['a subject in an untrusted domain', { subject: 'spiffe://evil.org/ns/ai' }, '/subject'],
    ['another currency', { currency: 'EUR' }, '/currency'],
    ['a float-like budget with 3 decimals', { budget: '10.001' }, '/budget'],
    ['a zero budget', { budget: '0' }, '/budget'],
    ['a negative budget', { budget: '-5' }, '/budget'],
    ['an exponent', { budget: '1e3' }, '/budget'],
    ['a budget over the maximum', { budget: '1000000000.01' }, '/budget'],
    ['a per-order maximum above the budget', { maxPerOrder: '10.01' }, '/maxPerOrder'],
    ['an expiry in the past', { expiresAt: '2000-01-01T00:00:00Z' }, '/expiresAt'],
    ['an expiry without an offset', { expiresAt: '2099-01-01T00:00:00' }, '/expiresAt'],
    ['a SKU prefix that no SKU can have', { allowedSkuPrefixes: ['ELC'] }, '/allowedSkuPrefixes/0'],
  ])('refuses %s with BAD_USER_INPUT and a pointer', async (_name, over, pointer) => {
    const r = await setPolicy({ subject: freshAgent('gql-bad'), budget: '10.00', ...over });
    const e = r.errors?.[0]?.extensions as { code?: string; errors?: { pointer: string }[] } | undefined;
    expect(e?.code).toBe('BAD_USER_INPUT');
    expect(e?.errors?.map((x) => x.pointer)).toContain(pointer);
  });

  it('pages through the policies by subject', async () => {
    const base = freshAgent('gql-page');
    for (const s of ['c', 'a', 'b']) await setPolicy({ subject: `${base}/${s}`, budget: '1.00' });
    const page = async (after: string | null) =>
      (
        await sys.gql('query($a: ID) { spendPolicies(after: $a, first: 2) { subject } }', {
          token: admin,
          variables: { a: after },
        })
      ).data?.spendPolicies as { subject: string }[];
    const first = await page(`${base}/`);
    expect(first.map((p) => p.subject)).toEqual([`${base}/a`, `${base}/b`]);
    const second = await page(`${base}/b`);
    expect(second[0]?.subject).toBe(`${base}/c`);
  });
});

describe('enforcement in the agent chain', () => {
  it('accepts orders up to the period budget, then 403 spend-limit-exceeded with nothing stored, audited', async () => {
    const id = freshAgent('budget');
    await setPolicy({ subject: id, budget: '100.00' });
    expect((await order(id, '60.25')).status).toBe(201);
    expect((await order(id, '39.75')).status).toBe(201);
    const before = placed();
    const r = await order(id, '0.01', { trace: `spend-over-${id}` });
    expectSpendProblem(r, 'spend-limit-exceeded');
    expect(r.json).toMatchObject({
      limit: 'period-budget',
      amount: '0.01',
      currency: 'USD',
      budget: '100.00',
      remaining: '0.00',
      period: 'day',
      policy_subject: id,
      resets_at: new Date(nextMidnight()).toISOString(),
    });
    expect(placed()).toBe(before);
    const audited = await auditReason(`spend-over-${id}`);
    expect(audited?.status).toBe(403);
    expect(audited?.reason).toMatch(/^spend: over the period budget/);
  });

  it('refuses an order over the per-order maximum, even with budget left', async () => {
    const id = freshAgent('per-order');
    await setPolicy({ subject: id, budget: '1000.00', maxPerOrder: '250.00' });
    expect((await order(id, '250.00')).status).toBe(201);
    const r = await order(id, '250.01');
    expectSpendProblem(r, 'spend-limit-exceeded');
    expect(r.json).toMatchObject({ limit: 'per-order', max_per_order: '250.00', remaining: '750.00' });
  });

  it('refuses a SKU outside the allowed prefixes', async () => {
    const id = freshAgent('sku');
    await setPolicy({ subject: id, budget: '1000.00', allowedSkuPrefixes: ['SKU-TOY-', 'SKU-ELC-0000'] });
    expect((await order(id, '5.00', { sku: 'SKU-ELC-000009' })).status).toBe(201);
    const r = await order(id, '5.00', { sku: 'SKU-ELC-100000' });
    expectSpendProblem(r, 'spend-sku-not-allowed');
    expect(r.json.allowed_sku_prefixes).toEqual(['SKU-TOY-', 'SKU-ELC-0000']);
  });

  it('refuses every order once the policy has expired', async () => {
    const id = freshAgent('expiry');
    await setPolicy({
      subject: id,
      budget: '1000.00',
      expiresAt: new Date(clock.now() + 60_000).toISOString(),
    });
    expect((await order(id, '5.00')).status).toBe(201);
    clock.advance(60_000);
    const r = await order(id, '5.00');
    expectSpendProblem(r, 'spend-policy-expired');
    expect(r.json.remaining).toBe('995.00');
  });

  it('starts the day budget again at 00:00 UTC', async () => {
    const id = freshAgent('reset');
    await setPolicy({ subject: id, budget: '10.00' });
    expect((await order(id, '10.00')).status).toBe(201);
    expect((await order(id, '10.00')).status).toBe(403);
    clock.advance(nextMidnight() - clock.now());
    expect((await order(id, '10.00')).status).toBe(201);
    clock.advance(DAY / 2);
  });

  it('shares a prefix policy budget among the identities below it; a more specific policy wins', async () => {
    const team = freshAgent('team');
    await setPolicy({ subject: team, budget: '30.00' });
    await setPolicy({ subject: `${team}/vip`, budget: '500.00' });
    expect((await order(`${team}/a`, '20.00')).status).toBe(201);
    const r = await order(`${team}/b`, '20.00');
    expectSpendProblem(r, 'spend-limit-exceeded');
    expect(r.json).toMatchObject({ remaining: '10.00', policy_subject: team });
    expect((await order(`${team}/vip`, '200.00')).status).toBe(201);
  });

  it('charges an idempotent retry once', async () => {
    const id = freshAgent('idem');
    await setPolicy({ subject: id, budget: '100.00' });
    const a = await order(id, '70.00', { key: 'spend-retry' });
    const b = await order(id, '70.00', { key: 'spend-retry' });
    expect(a.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect((await readSpend(id)).json.current_period).toMatchObject({ spent: '70.00', remaining: '30.00' });
  });

  it('frees the Idempotency-Key of a refused order, so the same key works once the budget allows it', async () => {
    const id = freshAgent('idem-refused');
    await setPolicy({ subject: id, budget: '10.00' });
    expect((await order(id, '20.00', { key: 'k-refused' })).status).toBe(403);
    await setPolicy({ subject: id, budget: '50.00' });
    expect((await order(id, '20.00', { key: 'k-refused' })).status).toBe(201);
  });

  it('gives the reservation back when the order domain did not store the order', async () => {
    const id = freshAgent('domain-down');
    await setPolicy({ subject: id, budget: '100.00' });
    db.failOrders = true;
    try {
      expect((await order(id, '80.00')).status).toBe(503);
      expect((await order(id, '80.00', { key: 'k-down' })).status).toBe(503);
    } finally {
      db.failOrders = false;
    }
    expect((await readSpend(id)).json.current_period).toMatchObject({ spent: '0.00' });
    expect((await order(id, '80.00', { key: 'k-down' })).status).toBe(201);
  });

  it('returns a cancelled order amount to its period once, through POST …/cancel, however often it is cancelled', async () => {
    const id = freshAgent('cancel');
    await setPolicy({ subject: id, budget: '100.00' });
    const r = await order(id, '60.00');
    expect(r.status, r.text).toBe(201);
    expect((await order(id, '50.00')).status).toBe(403);
    const cancel = () =>
      fetch(`${sys.url}/api/v2/procurement/orders/${String(r.json.order_id)}/cancel`, {
        method: 'POST',
        headers: { 'x-spiffe-id': id },
      });
    expect((await cancel()).status).toBe(200);
    expect((await readSpend(id)).json.current_period).toMatchObject({ spent: '0.00', remaining: '100.00' });
    // A repeated cancel (a retry after a lost reply) answers the same 200 and gives nothing back twice.
    expect((await cancel()).status).toBe(200);
    expect((await order(id, '100.00')).status).toBe(201);
    expect((await readSpend(id)).json.current_period).toMatchObject({ spent: '100.00', remaining: '0.00' });
    expect((await order(id, '0.01')).status).toBe(403);
  });

  it('leaves identities without a policy unlimited by default', async () => {
    expect((await order(freshAgent('no-policy'), '5000')).status).toBe(201);
  });
});

describe('GET /api/v2/procurement/spend', () => {
  it("answers the caller's own policy and what is left in the current period", async () => {
    const team = freshAgent('read');
    await setPolicy({ subject: team, budget: '100.00', maxPerOrder: '50.00' });
    await order(`${team}/x`, '12.34');
    const r = await readSpend(`${team}/x`);
    expect(r.status, r.text).toBe(200);
    documented('SpendStatus', r.json);
    expect(r.json).toEqual({
      identity: `${team}/x`,
      policy: {
        subject: team,
        applies_to: 'prefix',
        currency: 'USD',
        period: 'day',
        budget: '100.00',
        max_per_order: '50.00',
        approval_above: null,
        second_approval_above: null,
        expires_at: null,
        allowed_sku_prefixes: [],
      },
      current_period: {
        start: new Date(nextMidnight() - DAY).toISOString(),
        resets_at: new Date(nextMidnight()).toISOString(),
        spent: '12.34',
        remaining: '87.66',
      },
      without_policy: 'allow',
    });
  });

  it('answers policy null for an identity no policy covers', async () => {
    const r = await readSpend(freshAgent('read-none'));
    expect(r.status).toBe(200);
    documented('SpendStatus', r.json);
    expect(r.json).toMatchObject({ policy: null, current_period: null, without_policy: 'allow' });
  });

  it.each([
    ['no identity', null, 401, 'unverified-workload-identity'],
    ['an identity without spend:read', NO_SPEND_READ, 403, 'insufficient_scope'],
  ])('refuses %s', async (_name, spiffe, status, type) => {
    const r = await readSpend(spiffe);
    expect(r.status).toBe(status);
    expect(String(r.json.type)).toMatch(new RegExp(`/${type}$`));
  });
});
