/**
 * The signed approval record (lib/ap2/approval-record.ts; docs/ap2.md, "The approval decision"):
 * built from a decided order (subgraphs/procurement/domain/approval-record.ts), signed, and
 * checked offline with the business's public key. Bent records are each refused with a message
 * naming what is wrong (a table); the offline threshold rule agrees with the spend policy's own
 * for any policy and amount (a property, fast-check).
 */
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { CompactSign, exportJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  type ApprovalRecord,
  requiredUnder,
  signApprovalRecord,
  verifyApprovalRecord,
} from '../../lib/ap2/approval-record.ts';
import { jcs } from '../../lib/ap2/canonical.ts';
import { approvalRecordOf } from '../../subgraphs/procurement/domain/approval-record.ts';
import type { PurchaseOrder } from '../../subgraphs/procurement/domain/purchase-order.ts';
import {
  approvalsRequired,
  type SpendPolicy,
  textOfCents,
} from '../../subgraphs/procurement/spend/policy.ts';

const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ours = pair();
const theirs = pair();
const KID = 'business-1';
const KEYS: JWK[] = [{ ...(await exportJWK(ours.publicKey)), kid: KID, alg: 'ES256' }];
const ORDER = `ord_${'a'.repeat(32)}`;

const decided = (over: Partial<PurchaseOrder> = {}): PurchaseOrder => ({
  orderId: ORDER,
  status: 'APPROVED',
  agentId: 'agent-0000001',
  spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/a',
  sku: 'SKU-ABC-000001',
  quantity: 1,
  allocatedBudget: '250.5' as PurchaseOrder['allocatedBudget'],
  processedAt: 1_790_000_000,
  cancelledAt: null,
  traceId: 't',
  approvalsRequired: 1,
  approvals: [{ operator: 'alice', at: 1_790_000_100.5, note: 'ok' }],
  expiresAt: 1_790_086_400,
  decidedAt: 1_790_000_100.5,
  decidedBy: 'alice',
  decisionReason: 'ok',
  version: 1,
  lines: null,
  total: null,
  checkoutSessionId: null,
  approvalPolicy: { subject: 'spiffe://example.org/ns/ai', currency: 'USD', approval_above: '100.00' },
  ...over,
});

const record = (over: Partial<PurchaseOrder> = {}): ApprovalRecord => {
  const r = approvalRecordOf(decided(over));
  if (!r) throw new Error('no record');
  return r;
};
const sign = (r: ApprovalRecord, key = ours.privateKey) => signApprovalRecord(r, { kid: KID, key });
/** The JWS with its payload replaced and the signature kept: what an edit after signing gives. */
const edited = (jws: string, change: (r: ApprovalRecord) => ApprovalRecord) => {
  const [h, p, s] = jws.split('.') as [string, string, string];
  const r = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as ApprovalRecord;
  return `${h}.${jcs(change(r)).toString('base64url')}.${s}`;
};

describe('the approval record', () => {
  it('names the decision, each approver and time, the policy and the amount, and verifies with our key', async () => {
    const r = record();
    expect(r).toEqual({
      order_id: ORDER,
      decision: 'approved',
      amount: '250.50',
      currency: 'USD',
      policy: { subject: 'spiffe://example.org/ns/ai', currency: 'USD', approval_above: '100.00' },
      approvals_required: 1,
      approvals: [{ operator: 'alice', at: '2026-09-21T14:15:00.500Z', note: 'ok' }],
      decided_at: '2026-09-21T14:15:00.500Z',
    });
    const { jws, sha256 } = await sign(r);
    const v = await verifyApprovalRecord(jws, KEYS, ORDER);
    expect(v).toEqual({ ok: true, record: r, kid: KID, sha256 });
  });

  it('records a rejection under dual control with the approval given before it', async () => {
    const r = record({
      status: 'REJECTED',
      approvalsRequired: 2,
      allocatedBudget: '900.00' as PurchaseOrder['allocatedBudget'],
      approvalPolicy: {
        subject: 'spiffe://example.org/ns/ai',
        currency: 'USD',
        approval_above: '100.00',
        second_approval_above: '500.00',
      },
      decidedBy: 'bob',
      decisionReason: 'not this quarter',
    });
    expect(r.decision).toBe('rejected');
    expect(r.rejection).toEqual({ operator: 'bob', at: r.decided_at, reason: 'not this quarter' });
    expect((await verifyApprovalRecord((await sign(r)).jws, KEYS, ORDER)).ok).toBe(true);
  });

  it('is not made for an order that did not wait, is not decided, or has no policy kept', () => {
    expect(approvalRecordOf(decided({ approvalsRequired: 0 }))).toBeUndefined();
    expect(approvalRecordOf(decided({ status: 'PENDING_APPROVAL', decidedAt: null }))).toBeUndefined();
    expect(approvalRecordOf(decided({ status: 'EXPIRED' }))).toBeUndefined();
    const { approvalPolicy: _, ...withoutPolicy } = decided();
    expect(approvalRecordOf(withoutPolicy)).toBeUndefined();
  });

  it('refuses bent records, each with a message that names what is wrong', async () => {
    const { jws } = await sign(record());
    const other = `ord_${'b'.repeat(32)}`;
    const dual = record({
      approvalsRequired: 2,
      approvals: [
        { operator: 'alice', at: 1_790_000_100, note: null },
        { operator: 'bob', at: 1_790_000_200, note: null },
      ],
      allocatedBudget: '900.00' as PurchaseOrder['allocatedBudget'],
      approvalPolicy: {
        subject: 'spiffe://example.org/ns/ai',
        currency: 'USD',
        approval_above: '100.00',
        second_approval_above: '500.00',
      },
    });
    const cases: [string, Promise<string | unknown>, string, RegExp][] = [
      [
        'an edited approver',
        Promise.resolve(
          edited(jws, (r) => ({ ...r, approvals: r.approvals.map((a) => ({ ...a, operator: 'mallory' })) })),
        ),
        ORDER,
        /signature does not verify with the business key business-1/,
      ],
      [
        'an edited threshold',
        Promise.resolve(edited(jws, (r) => ({ ...r, policy: { ...r.policy, approval_above: '300.00' } }))),
        ORDER,
        /signature does not verify/,
      ],
      [
        'a signature by another key',
        sign(record(), theirs.privateKey).then((s) => s.jws),
        ORDER,
        /does not verify/,
      ],
      [
        'the record of another order',
        Promise.resolve(jws),
        other,
        new RegExp(`is of order ${ORDER}, not ${other}`),
      ],
      [
        'a signed record whose threshold asks no approval at its amount',
        sign({ ...record(), amount: '99.00' }).then((s) => s.jws),
        ORDER,
        /needs 0 approval\(s\), not the 1 the record lists/,
      ],
      [
        'a signed record with one approval where the policy asks two',
        sign({ ...dual, approvals: dual.approvals.slice(0, 1) }).then((s) => s.jws),
        ORDER,
        /approved by 1 operator\(s\), but its policy needs 2/,
      ],
      [
        'a signed record listing one operator twice',
        sign({
          ...dual,
          approvals: [dual.approvals[0], dual.approvals[0]] as ApprovalRecord['approvals'],
        }).then((s) => s.jws),
        ORDER,
        /one operator twice/,
      ],
      [
        'a JWS of another type',
        new CompactSign(jcs(record())).setProtectedHeader({ alg: 'ES256', kid: KID }).sign(ours.privateKey),
        ORDER,
        /typ is undefined, not order-approval\+jws/,
      ],
      [
        'alg none',
        Promise.resolve(
          `${Buffer.from(JSON.stringify({ alg: 'none', kid: KID, typ: 'order-approval+jws' })).toString('base64url')}.${jcs(record()).toString('base64url')}.`,
        ),
        ORDER,
        /alg "none" is not ES256/,
      ],
      ['not a JWS', Promise.resolve('approved, trust me'), ORDER, /not a compact JWS/],
      [
        'a signed payload that is not a record',
        new CompactSign(Buffer.from('null'))
          .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'order-approval+jws' })
          .sign(ours.privateKey),
        ORDER,
        /not an object with a policy and a list of approvals/,
      ],
      [
        'a signed record whose approvals are not objects',
        new CompactSign(jcs({ ...record(), approvals: [null] }))
          .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'order-approval+jws' })
          .sign(ours.privateKey),
        ORDER,
        /an approval or the rejection of the record is not an object/,
      ],
    ];
    expect((await verifyApprovalRecord((await sign(dual)).jws, KEYS, ORDER)).ok).toBe(true);
    for (const [what, made, orderId, message] of cases) {
      const v = await verifyApprovalRecord(await made, KEYS, orderId);
      expect(v.ok, what).toBe(false);
      expect(v.ok ? '' : v.problem, what).toMatch(message);
    }
  });

  it('asks as many approvals offline as the spend policy does, for any thresholds and amount', () => {
    const cents = fc.integer({ min: 0, max: 100_000_000 });
    fc.assert(
      fc.property(
        cents,
        fc.option(cents, { nil: undefined }),
        fc.option(cents, { nil: undefined }),
        (a, f, s) => {
          const first = f;
          const second = first !== undefined && s !== undefined ? first + s : undefined;
          const policy = {
            subject: 'spiffe://example.org',
            currency: 'USD',
            period: 'DAY',
            budgetCents: 1,
            updatedAt: 0,
            ...(first !== undefined ? { approvalAboveCents: first } : {}),
            ...(second !== undefined ? { secondApprovalAboveCents: second } : {}),
          } as unknown as SpendPolicy;
          const offline = requiredUnder(
            {
              subject: policy.subject,
              currency: 'USD',
              ...(first !== undefined ? { approval_above: textOfCents(first) } : {}),
              ...(second !== undefined ? { second_approval_above: textOfCents(second) } : {}),
            },
            textOfCents(a),
          );
          expect(offline).toBe(approvalsRequired(policy, a));
        },
      ),
    );
  });
});
