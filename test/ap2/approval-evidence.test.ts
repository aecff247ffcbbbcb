/**
 * The approval decision in the order's evidence (issue 50; docs/ap2.md, "The approval decision"),
 * end to end against the embedded system: an order above its policy's approvalAbove waits, an
 * operator decides over GraphQL, and the owner's GET …/authorization returns the decision signed
 * by this system, whose SHA-256 that read's audit entry names; operators read it over GraphQL;
 * `npm run audit:prove-verify -- --authorization` checks it offline from public keys only, and
 * refuses bent evidence. An order that did not wait says under which policy and amount.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { JSONWebKeySet, JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuthorizedOrder } from '../../gateway/agent/order/authorization-verify.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, freshAgent, post, validOrder } from '../procurement/support/agent.ts';
import { setApprovalPolicy } from '../procurement/support/spend.ts';
import { documented } from './support/documented.ts';

let sys: TestSystem;
let spendAdmin: string;
let alice: string;
let bob: string;
let businessKeys: JWK[];
let auditKeys: JSONWebKeySet;

const APPROVE = 'mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }';
const REJECT =
  'mutation($id: ID!, $reason: String!) { rejectPurchaseOrder(orderId: $id, reason: $reason) { status } }';
const DUAL = { approvalAbove: '100.00', secondApprovalAbove: '500.00' };

const get = async (spiffe: string, path: string) => {
  const res = await fetch(`${sys.url}${path}`, { headers: { 'x-spiffe-id': spiffe } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** The owner's authorization read, checked against its documented schema (OrderAuthorization). */
async function authorizationOf(spiffe: string, id: string) {
  const r = await get(spiffe, `/api/v2/procurement/orders/${id}/authorization`);
  expect(r.status).toBe(200);
  documented('OrderAuthorization', r.body);
  return r;
}

/** An order of a fresh agent under its own policy; its id and the agent. */
async function placed(amount: string, over: Record<string, unknown> = DUAL) {
  const agent = freshAgent('approval-evidence');
  await setApprovalPolicy(sys, spendAdmin, agent, over);
  const r = await post(sys.url, {
    spiffe: agent,
    body: JSON.stringify(validOrder()).replace('250.75', amount),
  });
  expect(r.status, r.text).toBeLessThan(300);
  return { agent, id: String(r.json.order_id), status: r.status };
}

async function decide(query: string, token: string, variables: Record<string, unknown>) {
  const r = await sys.gql(query, { token, variables });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
}

/** The audit proof once it holds an entry whose reason contains `text` (entries are written in batches). */
async function proofNaming(agent: string, id: string, text: string) {
  for (let i = 0; i < 100; i++) {
    const proof = (await get(agent, `/api/v2/procurement/orders/${id}/audit-proof`)).body;
    const entries = (proof.entries ?? []) as { reason?: string }[];
    if (entries.some((e) => e.reason?.includes(text))) return proof;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no audit entry of ${id} names ${text}`);
}

beforeAll(async () => {
  sys = await startEmbedded({
    AGENT_SCOPE_POLICY: JSON.stringify({ [AGENT]: ['orders:create', 'orders:read', 'spend:read'] }),
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
    SHED_QUOTE_BUDGET_MS: '0',
    SHED_ORDER_BUDGET_MS: '0',
    CATALOG_SIZE: '500',
  });
  spendAdmin = await sys.token(['spend:admin']);
  alice = await sys.token(['orders:approve', 'orders:read'], 'alice');
  bob = await sys.token(['orders:approve'], 'bob');
  businessKeys = ((await (await fetch(`${sys.url}/.well-known/ucp`)).json()) as { signing_keys: JWK[] })
    .signing_keys;
  auditKeys = (await (await fetch(`${sys.url}/.well-known/audit-keys.json`)).json()) as JSONWebKeySet;
}, 120_000);
afterAll(() => sys?.close());

describe('the approval decision in the order’s evidence', () => {
  it('is signed, returned to the owner and operators, logged, and verified offline; bent evidence is refused', async () => {
    const { agent, id, status } = await placed('250.75');
    expect(status).toBe(202);
    const before = await authorizationOf(agent, id);
    expect(before.body.approval).toEqual({
      type: 'undecided',
      status: 'PENDING_APPROVAL',
      approvals_required: 1,
    });
    await decide(APPROVE, alice, { id });
    // Operators read the record over GraphQL (orders:read).
    const op = await sys.gql(
      `query($id: ID!) { purchaseOrder(orderId: $id) { approvalRecord {
         record recordSha256 kid decision policySubject approvalAbove secondApprovalAbove amount approvalsRequired decidedAt } } }`,
      { token: alice, variables: { id } },
    );
    expect(op.errors).toBeUndefined();
    const view = (op.data as { purchaseOrder: { approvalRecord: Record<string, unknown> } }).purchaseOrder
      .approvalRecord;
    expect(view).toMatchObject({
      kid: businessKeys[0]?.kid,
      decision: 'approved',
      policySubject: agent,
      approvalAbove: '100.00',
      secondApprovalAbove: '500.00',
      amount: '250.75',
      approvalsRequired: 1,
    });
    // The decision's own audit entry names the record, before the owner reads anything.
    const decisionProof = await proofNaming(
      agent,
      id,
      `approvePurchaseOrder by operator alice: APPROVED; approval record sha-256 ${view.recordSha256}`,
    );
    const mine = await authorizationOf(agent, id);
    expect(mine.status).toBe(200);
    const approval = mine.body.approval as {
      type: string;
      record: string;
      record_sha256: string;
      audit_reason: string;
    };
    expect(approval).toEqual({
      type: 'signed_approval_record',
      record: view.record,
      record_sha256: view.recordSha256,
      audit_reason: `approval record sha-256 ${view.recordSha256}`,
    });
    expect(mine.body).toMatchObject({ order_id: id, authorization: null, payment_data: null });
    // The whole chain offline, from public keys only, with the proof taken before the read.
    const chain = {
      proof: decisionProof,
      auditKeys,
      evidence: mine.body,
      platformKeys: [],
      businessKeys,
    };
    const verdict = await verifyAuthorizedOrder(chain);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.approval?.record).toMatchObject({
      order_id: id,
      decision: 'approved',
      amount: '250.75',
      approvals: [{ operator: 'alice' }],
      policy: { subject: agent, approval_above: '100.00', second_approval_above: '500.00' },
    });
    // Bent evidence, each refused with what is wrong.
    const another = await placed('300.00');
    await decide(APPROVE, bob, { id: another.id });
    const anotherRecord = (
      (await authorizationOf(another.agent, another.id)).body.approval as { record: string }
    ).record;
    const [h, p, s] = approval.record.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
    const repacked = (change: Record<string, unknown>) =>
      `${h}.${Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url')}.${s}`;
    const withRecord = (record: string) => ({
      evidence: { ...mine.body, approval: { ...approval, record } },
    });
    const bent: [string, Partial<typeof chain>, RegExp][] = [
      [
        'an edited approver',
        withRecord(repacked({ approvals: [{ operator: 'mallory', at: '2026-01-01T00:00:00.000Z' }] })),
        /approval: .*signature does not verify/,
      ],
      [
        'an edited threshold',
        withRecord(repacked({ policy: { ...(payload.policy as object), approval_above: '260.00' } })),
        /approval: .*signature does not verify/,
      ],
      [
        'the record of another order',
        withRecord(anotherRecord),
        new RegExp(`approval: the approval record is of order ${another.id}, not ${id}`),
      ],
      [
        'another business key',
        { businessKeys: [{ ...(businessKeys[0] as JWK), x: (businessKeys[0] as JWK).y as string }] },
        /approval: /,
      ],
      [
        'another order id',
        { evidence: { ...mine.body, order_id: another.id } },
        /approval: the approval record is of order/,
      ],
      [
        'the proof of another order',
        {
          proof: await get(another.agent, `/api/v2/procurement/orders/${another.id}/audit-proof`).then(
            (r) => r.body,
          ),
        },
        /approval|audit proof/,
      ],
    ];
    for (const [what, change, message] of bent) {
      const v = await verifyAuthorizedOrder({ ...chain, ...change });
      expect(v.ok, what).toBe(false);
      expect(v.ok ? '' : v.problem, what).toMatch(message);
    }
    // The command itself, from files (exit 0, the decision named).
    const dir = mkdtempSync(join(tmpdir(), 'approval-evidence-'));
    const file = (name: string, v: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify(v));
      return join(dir, name);
    };
    const run = await promisify(execFile)(
      'npx',
      [
        'tsx',
        'scripts/audit-prove-verify.ts',
        '--keys',
        file('audit-keys.json', auditKeys),
        file('proof.json', chain.proof),
        '--authorization',
        file('authorization.json', mine.body),
        '--business-keys',
        file('ucp.json', { signing_keys: businessKeys }),
      ],
      { cwd: process.cwd() },
    );
    expect(run.stdout).toContain(`approved: order ${id} of 250.75 USD approved by alice at`);
    expect(run.stdout).toContain(
      `under policy ${agent} (approval above 100.00, two above 500.00 USD: 1 required)`,
    );
  }, 120_000);

  it('signs a rejection under dual control, with the approval given before it', async () => {
    const { agent, id } = await placed('900.00');
    await decide(APPROVE, alice, { id });
    await decide(REJECT, bob, { id, reason: 'not this quarter' });
    const mine = await authorizationOf(agent, id);
    const approval = mine.body.approval as { record: string; audit_reason: string };
    const proof = await proofNaming(
      agent,
      id,
      `rejectPurchaseOrder by operator bob: REJECTED; ${approval.audit_reason}`,
    );
    // The first approval of two is logged too, with the order still waiting and no record yet.
    const reasons = (proof.entries as { reason: string }[]).map((e) => e.reason);
    expect(reasons).toContain('approvePurchaseOrder by operator alice: PENDING_APPROVAL');
    const verdict = await verifyAuthorizedOrder({
      proof,
      auditKeys,
      evidence: mine.body,
      platformKeys: [],
      businessKeys,
    });
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    expect(verdict.ok && verdict.approval?.record).toMatchObject({
      decision: 'rejected',
      approvals_required: 2,
      approvals: [{ operator: 'alice' }],
      rejection: { operator: 'bob', reason: 'not this quarter' },
    });
  }, 60_000);

  it('says an order that did not wait needed no approval, under which policy at which amount (not signed)', async () => {
    const { agent, id, status } = await placed('99.50');
    expect(status).toBe(201);
    const mine = await authorizationOf(agent, id);
    expect(mine.body.approval).toEqual({
      type: 'not_required',
      policy: { subject: agent, currency: 'USD', approval_above: '100.00', second_approval_above: '500.00' },
      amount: '99.50',
    });
    const verdict = await verifyAuthorizedOrder({
      proof: (await get(agent, `/api/v2/procurement/orders/${id}/audit-proof`)).body,
      auditKeys,
      evidence: mine.body,
      platformKeys: [],
      businessKeys,
    });
    expect(verdict).toEqual({ ok: false, problem: 'authorization: the order has no authorization evidence' });
  });
});
