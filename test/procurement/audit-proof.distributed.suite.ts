/**
 * Audit proofs in the distributed topology (docs/audit-proofs.md): two gateway replicas extend
 * one audit chain in PostgreSQL, and each builds its own Merkle tree from the shared table. A
 * proof from either replica verifies with the keys the other publishes; the operator's
 * consistency proof across both verifies; and a log cut in Postgres while the replicas run, then
 * written again, is read anew by the tree, so the consistency proof from a head signed before
 * the cut fails offline.
 */
import type { JSONWebKeySet } from 'jose';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditProof } from '../../gateway/agent/audit/prove-verify.ts';
import type { DistributedSystem } from '../../harness/distributed.ts';
import { freshAgent, ORDERS, post, validOrder } from './support/agent.ts';

/** Runs on the topology `topology` gives (test/procurement/replicas.distributed.test.ts shares one), which it does not stop. */
export function auditProofSuite(topology: () => Promise<DistributedSystem>): void {
  let sys: DistributedSystem;
  beforeAll(async () => {
    sys = await topology();
  }, 180_000);

  const at = (i: number) => sys.gateways[i] as string;
  async function json(url: string, headers: Record<string, string> = {}) {
    const res = await fetch(url, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  async function place(gateway: number, spiffe: string): Promise<string> {
    const r = await post(at(gateway), { spiffe, body: JSON.stringify(validOrder()) });
    expect(r.status, r.text).toBe(201);
    return r.json.order_id as string;
  }
  const proofOf = (gateway: number, id: string, spiffe: string) =>
    json(`${at(gateway)}${ORDERS}/${id}/audit-proof`, { 'x-spiffe-id': spiffe });
  async function consistency(gateway: number, first: number) {
    const token = await sys.token(['audit:read'], 'ops-auditor');
    return json(`${at(gateway)}/api/v2/operator/audit/consistency?first=${first}`, {
      authorization: `Bearer ${token}`,
    });
  }

  describe('audit proofs across gateway replicas on PostgreSQL', () => {
    it('a proof from either replica verifies; a cut and rewritten log fails the consistency proof', async () => {
      const agent = freshAgent('dist-prover');
      const id = await place(0, agent);
      await place(1, freshAgent('dist-other'));
      const keys = (await json(`${at(1)}/.well-known/audit-keys.json`)).body as unknown as JSONWebKeySet;
      expect(await json(`${at(0)}/.well-known/audit-keys.json`)).toMatchObject({ status: 200, body: keys });

      // The order was placed through replica 0; replica 1 proves it from the shared table.
      const fromOther = await proofOf(1, id, agent);
      expect(fromOther.status).toBe(200);
      expect(await verifyAuditProof(fromOther.body, keys)).toMatchObject({ ok: true, orderId: id });
      const early = (await proofOf(0, id, agent)).body;
      expect(await verifyAuditProof(early, keys)).toMatchObject({ ok: true });
      const size = (early.tree_head as { tree_size: number }).tree_size;

      // More calls through both replicas, then the operator asks replica 1.
      await place(1, freshAgent('dist-more'));
      await place(0, freshAgent('dist-more'));
      const c = await consistency(1, size);
      expect(c.status, JSON.stringify(c.body)).toBe(200);
      expect(await verifyAuditProof(early, keys, c.body)).toMatchObject({ ok: true });

      // Cut the last entries in Postgres while both replicas run; the chain goes on from the cut
      // (each batch reads the tail), and writes past the earlier head again.
      const head = (c.body.tree_head as { tree_size: number }).tree_size;
      const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
      await db.connect();
      try {
        await db.query('DELETE FROM agent_audit_log WHERE seq > $1', [size - 2]);
      } finally {
        await db.end();
      }
      expect(head).toBeGreaterThan(size);
      for (let i = 0; i < head - size + 4; i++) await place(i % 2, freshAgent('dist-rewritten'));
      for (const gateway of [0, 1]) {
        const cut = await consistency(gateway, size);
        expect(cut.status, JSON.stringify(cut.body)).toBe(200);
        const verdict = await verifyAuditProof(early, keys, cut.body);
        expect(verdict, `replica ${gateway}`).toMatchObject({ ok: false });
        expect(verdict.ok ? '' : verdict.problem).toContain('is not an extension');
      }
    }, 240_000);
  });
}
