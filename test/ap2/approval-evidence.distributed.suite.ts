/**
 * The approval decision in the order's evidence on the distributed topology (issue 50;
 * docs/ap2.md, "The approval decision"): the gateway passes the policy that applied to the
 * procurement process over its internal HTTP route, the procurement process signs the operator's
 * decision with the business key ring the gateways publish, the gateway that took the decision
 * logs it with the record's SHA-256, and the evidence read on the other replica verifies offline
 * with the public keys and the audit proof taken before that read.
 */
import type { JSONWebKeySet, JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyAuthorizedOrder } from '../../gateway/agent/order/authorization-verify.ts';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { freshAgent, ORDERS, post, validOrder } from '../procurement/support/agent.ts';

/** Runs on the topology `topology` gives (test/procurement/replicas.distributed.test.ts shares one), which it does not stop. */
export function approvalEvidenceSuite(topology: () => Promise<DistributedSystem>): void {
  let sys: DistributedSystem;
  beforeAll(async () => {
    sys = await topology();
  }, 180_000);

  const at = (i: number) => sys.gateways[i % sys.gateways.length] as string;
  const json = async (url: string, headers: Record<string, string> = {}) =>
    (await (await fetch(url, { headers })).json()) as Record<string, unknown>;

  describe('the approval decision in the evidence (distributed)', () => {
    it('is signed by the procurement process with the key the gateways publish, and verifies offline', async () => {
      const agent = freshAgent('approval-evidence-dist');
      const ops = await sys.token(['spend:admin', 'orders:approve'], 'carol');
      const set = await sys.gql('mutation($p: SpendPolicyInput!) { setSpendPolicy(input: $p) { subject } }', {
        token: ops,
        variables: {
          p: { subject: agent, currency: 'USD', period: 'DAY', budget: '1000.00', approvalAbove: '100.00' },
        },
      });
      expect(set.errors).toBeUndefined();
      const placed = await post(at(0), { spiffe: agent, body: JSON.stringify(validOrder()) });
      expect(placed.status, placed.text).toBe(202);
      const id = String(placed.json.order_id);
      const approved = await sys.gql('mutation($id: ID!) { approvePurchaseOrder(orderId: $id) { status } }', {
        token: ops,
        variables: { id },
      });
      expect(approved.errors, JSON.stringify(approved.errors)).toBeUndefined();
      // The gateway that took the decision logged it with the record's SHA-256, before any read.
      const decided = 'approvePurchaseOrder by operator carol: APPROVED; approval record sha-256 ';
      let proof: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) {
        proof = await json(`${at(1)}${ORDERS}/${id}/audit-proof`, { 'x-spiffe-id': agent });
        const entries = (proof.entries ?? []) as { reason?: string }[];
        if (entries.some((e) => e.reason?.startsWith(decided))) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const evidence = await json(`${at(1)}${ORDERS}/${id}/authorization`, { 'x-spiffe-id': agent });
      const approval = evidence.approval as { type: string; record_sha256: string };
      expect(approval.type).toBe('signed_approval_record');
      expect((proof.entries as { reason: string }[]).map((e) => e.reason)).toContain(
        `${decided}${approval.record_sha256}`,
      );
      const verdict = await verifyAuthorizedOrder({
        proof,
        auditKeys: (await json(`${at(0)}/.well-known/audit-keys.json`)) as unknown as JSONWebKeySet,
        evidence,
        platformKeys: [],
        businessKeys: (await json(`${at(0)}/.well-known/ucp`)).signing_keys as JWK[],
      });
      expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
      expect(verdict.ok && verdict.approval?.record).toMatchObject({
        order_id: id,
        decision: 'approved',
        amount: '250.75',
        approvals: [{ operator: 'carol' }],
        policy: { subject: agent, currency: 'USD', approval_above: '100.00' },
      });
    }, 60_000);
  });
}
