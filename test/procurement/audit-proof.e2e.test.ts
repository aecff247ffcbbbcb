/**
 * Audit inclusion proofs (issue 31, part 2; docs/audit-proofs.md) over real HTTP against the
 * embedded system with its store on disk: an agent's proof of its own order verifies offline
 * with only the published keys; a proof of an edited entry, or an edited proof, fails; another
 * identity's order, unknown and malformed ids are the same 404 problem (table + fast-check);
 * the operator's consistency proof across a restart verifies, and one across a truncation
 * (rows deleted while the system was down, then new entries written) fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import type { JSONWebKeySet } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditProof } from '../../gateway/agent/audit/prove-verify.ts';
import { operatorContract } from '../../gateway/operator/contract.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, freshAgent, ORDERS, post, type Reply, validOrder } from './support/agent.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'ac-audit-proof-'));
const CREATE_ONLY = `${AGENT}/create-only`;
const env = {
  DATA_DIR: dataDir,
  EMBEDDED_DB: 'disk',
  AGENT_SCOPE_POLICY: JSON.stringify({
    [AGENT]: ['orders:create', 'orders:read', 'orders:cancel'],
    [CREATE_ONLY]: ['orders:create'],
  }),
};
let sys: TestSystem;

async function get(
  path: string,
  spiffe: string | null,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await request(`${sys.url}${path}`, {
    headers: { ...(spiffe === null ? {} : { 'x-spiffe-id': spiffe }), ...headers },
  });
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {}
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: h, text, json };
}
const proofOf = (id: string, spiffe: string | null) => get(`${ORDERS}/${id}/audit-proof`, spiffe);
const keys = async () => (await get('/.well-known/audit-keys.json', null)).json as unknown as JSONWebKeySet;
async function consistency(query: string): Promise<Reply> {
  const token = await sys.token(['audit:read'], 'ops-auditor');
  return get(`/api/v2/operator/audit/consistency${query}`, null, { authorization: `Bearer ${token}` });
}
async function place(spiffe: string): Promise<string> {
  const r = await post(sys.url, { spiffe, body: JSON.stringify(validOrder()) });
  expect(r.status, r.text).toBe(201);
  return r.json.order_id as string;
}
const expectProblem = (r: Reply, status: number, type: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.json.status).toBe(status);
  expect(String(r.json.type)).toMatch(new RegExp(`/${type}$`));
};
const restart = async () => {
  await sys.close();
  sys = await startEmbedded(env);
};

beforeAll(async () => {
  sys = await startEmbedded(env);
}, 120_000);
afterAll(() => sys?.close());

describe('an agent proves its order is in the audit log', () => {
  it('gets its order’s entries with inclusion proofs in a signed tree head that verify offline', async () => {
    const agent = freshAgent('prover');
    const id = await place(agent);
    expect((await get(`${ORDERS}/${id}`, agent)).status).toBe(200);
    // Calls of others in between: the tree has more than this order's leaves.
    await place(freshAgent('other'));
    const r = await proofOf(id, agent);
    expect(r.status, r.text).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    const proof = r.json as {
      order_id: string;
      tree_head: { tree_size: number };
      entries: { seq: number; leaf_index: number; method: string; status: number; leaf: string }[];
      more_entries: boolean;
    };
    expect(proof.order_id).toBe(id);
    expect(proof.more_entries).toBe(false);
    // Oldest first: the creation (201), then the read (200).
    expect(proof.entries.map((e) => [e.method, e.status])).toEqual([
      ['POST', 201],
      ['GET', 200],
    ]);
    for (const e of proof.entries) {
      expect(e.leaf_index).toBe(e.seq - 1);
      expect(JSON.parse(e.leaf)).toContain(agent);
      expect(e.seq).toBeLessThanOrEqual(proof.tree_head.tree_size);
    }
    const verdict = await verifyAuditProof(proof, await keys());
    expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true, orderId: id });
    // The next proof counts this call too (audited after its response).
    const again = await proofOf(id, agent);
    expect((again.json.entries as unknown[]).length).toBe(3);
    expect(await verifyAuditProof(again.json, await keys())).toMatchObject({ ok: true });
  });

  it('fails offline for an edited proof: a changed field, leaf, path element, root or signature', async () => {
    const agent = freshAgent('editor');
    const id = await place(agent);
    const { json } = await proofOf(id, agent);
    const jwks = await keys();
    expect(await verifyAuditProof(json, jwks)).toMatchObject({ ok: true });
    // biome-ignore lint/suspicious/noExplicitAny: edits of the answer as an attacker would make them
    const edits: [string, (p: any) => void][] = [
      ['status shown', (p) => (p.entries[0].status = 200)],
      ['leaf', (p) => (p.entries[0].leaf = p.entries[0].leaf.replace('"POST"', '"GET"'))],
      [
        'leaf and shown field together',
        (p) => {
          p.entries[0].leaf = p.entries[0].leaf.replace(',201,', ',200,');
          p.entries[0].status = 200;
        },
      ],
      ['leaf index', (p) => (p.entries[0].leaf_index += 1)],
      ['order id', (p) => (p.order_id = `ord_${'0'.repeat(32)}`)],
      ['root', (p) => (p.tree_head.root_hash = '0'.repeat(64))],
      ['tree size', (p) => (p.tree_head.tree_size += 1)],
      ['signature', (p) => (p.tree_head.signature = `${p.tree_head.signature.slice(0, -4)}AAAA`)],
      ['no entries', (p) => (p.entries = [])],
    ];
    if ((json.tree_head as { tree_size: number }).tree_size > 1)
      edits.push(['path element', (p) => (p.entries[0].inclusion_path[0] = 'f'.repeat(64))]);
    for (const [what, edit] of edits) {
      const copy = structuredClone(json);
      edit(copy);
      const verdict = await verifyAuditProof(copy, jwks);
      expect(verdict.ok, `${what}: ${JSON.stringify(verdict)}`).toBe(false);
    }
    // Keys of another log verify nothing.
    expect(await verifyAuditProof(json, { keys: [] })).toMatchObject({ ok: false });
  });

  it('fails for an entry edited in the store: its leaf no longer leads to the signed root', async () => {
    const agent = freshAgent('edited');
    const id = await place(agent);
    const before = await proofOf(id, agent);
    expect(await verifyAuditProof(before.json, await keys())).toMatchObject({ ok: true });
    const seq = (before.json.entries as { seq: number }[])[0]?.seq;
    await sys.platform.db.query("UPDATE agent_audit_log SET reason = 'edited' WHERE seq = $1", [seq]);
    try {
      const after = await proofOf(id, agent);
      expect(after.status).toBe(200);
      const verdict = await verifyAuditProof(after.json, await keys());
      expect(verdict).toMatchObject({ ok: false });
      expect(verdict.ok ? '' : verdict.problem).toContain(`entry ${seq}: its inclusion proof does not lead`);
    } finally {
      // Put back, so the log the next tests prove against is the one that was written.
      await sys.platform.db.query("UPDATE agent_audit_log SET reason = 'ok' WHERE seq = $1", [seq]);
    }
  });
});

describe('who may ask, and bad ids', () => {
  it('answers another identity’s order with the 404 of an unknown one', async () => {
    const owner = freshAgent('owner');
    const id = await place(owner);
    const other = await proofOf(id, freshAgent('stranger'));
    const unknown = await proofOf(`ord_${'0'.repeat(32)}`, freshAgent('stranger'));
    expectProblem(other, 404, 'not-found');
    expectProblem(unknown, 404, 'not-found');
    const { instance: _a, ...otherBody } = other.json;
    const { instance: _b, ...unknownBody } = unknown.json;
    expect(otherBody).toEqual(unknownBody);
  });

  it('refuses without identity (401) and without orders:read (403)', async () => {
    const id = await place(freshAgent('scoped'));
    expectProblem(await proofOf(id, null), 401, 'unverified-workload-identity');
    expectProblem(await proofOf(id, CREATE_ONLY), 403, 'insufficient_scope');
  });

  it.each([
    ['not an order id', 'abc', 404, 'not-found'],
    ['upper-case hex', `ord_${'A'.repeat(32)}`, 404, 'not-found'],
    ['one digit short', `ord_${'0'.repeat(31)}`, 404, 'not-found'],
    ['non-hex', `ord_${'g'.repeat(32)}`, 404, 'not-found'],
    ['encoded slash', 'ord_%2F..%2F', 404, 'not-found'],
    ['encoded NUL', 'ord_%00', 404, 'not-found'],
    ['too long for the router', 'x'.repeat(200), 414, 'uri-too-long'],
  ])('%s → %i %s', async (_what, id, status, type) => {
    expectProblem(await proofOf(id, freshAgent('bad-id')), status, type);
  });

  it('answers any path segment with a 4xx problem, never a 5xx (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 120 }), async (s) => {
        // A fresh identity each time: its own token bucket.
        const r = await proofOf(encodeURIComponent(s) || 'x', freshAgent('fuzz'));
        expect([404, 414], r.text).toContain(r.status);
        expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the operator’s consistency proof between tree heads', () => {
  it('verifies across a restart, and fails across a truncation', async () => {
    const agent = freshAgent('history');
    const id = await place(agent);
    const early = (await proofOf(id, agent)).json;
    const first = (early.tree_head as { tree_size: number }).tree_size;

    await restart();
    await place(freshAgent('after-restart'));
    const c = await consistency(`?first=${first}`);
    expect(c.status, c.text).toBe(200);
    expect(operatorContract().reply('AuditConsistency')(c.json), c.text).toBe(true);
    const second = c.json.second as number;
    expect(second).toBeGreaterThan(first);
    const jwks = await keys();
    const verdict = await verifyAuditProof(early, jwks, c.json);
    expect(verdict, JSON.stringify(verdict)).toMatchObject({
      ok: true,
      consistentWith: { tree_size: second },
    });

    // The offline verifier as a user runs it, with the files and the published keys only.
    const dir = mkdtempSync(join(tmpdir(), 'ac-proof-files-'));
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(jwks));
    writeFileSync(join(dir, 'proof.json'), JSON.stringify(early));
    writeFileSync(join(dir, 'consistency.json'), JSON.stringify(c.json));
    const cli = await runVerifier([
      '--keys',
      join(dir, 'keys.json'),
      join(dir, 'proof.json'),
      '--consistency',
      join(dir, 'consistency.json'),
    ]);
    expect(cli.code, cli.out).toBe(0);
    expect(cli.out).toContain(`audit proof verified: order ${id}`);
    expect(cli.out).toContain(`consistent: the log of ${second} entries`);

    // A later head, then the log cut below it while the system is down, and written again.
    const late = (await proofOf(id, agent)).json;
    const lateSize = (late.tree_head as { tree_size: number }).tree_size;
    await sys.close();
    const { openDb } = await import('../../lib/db/index.ts');
    const db = await openDb(sys.config);
    await db.query('DELETE FROM agent_audit_log WHERE seq > $1', [lateSize - 3]);
    await db.close();
    sys = await startEmbedded(env);
    // Shorter than the head: the operator is told the log holds fewer entries.
    const short = await consistency(`?first=${lateSize}`);
    expectProblem(short, 409, 'beyond-tree');
    expect(short.json.tree_size).toBe(lateSize - 3);
    // Written past it again: a proof is given, and it does not verify against the earlier head.
    for (let i = 0; i < 3; i++) await place(freshAgent('rewritten'));
    const cut = await consistency(`?first=${lateSize}`);
    expect(cut.status, cut.text).toBe(200);
    const broken = await verifyAuditProof(late, jwks, cut.json);
    expect(broken).toMatchObject({ ok: false });
    expect(broken.ok ? '' : broken.problem).toContain('is not an extension');
    writeFileSync(join(dir, 'late.json'), JSON.stringify(late));
    writeFileSync(join(dir, 'cut.json'), JSON.stringify(cut.json));
    const refused = await runVerifier([
      '--keys',
      join(dir, 'keys.json'),
      join(dir, 'late.json'),
      '--consistency',
      join(dir, 'cut.json'),
    ]);
    expect(refused.code, refused.out).toBe(1);
    expect(refused.out).toContain('audit proof NOT verified');
  }, 300_000);

  it.each([
    ['no first', '', 400, 'invalid-query'],
    ['first not a number', '?first=abc', 400, 'invalid-query'],
    ['negative first', '?first=-1', 400, 'invalid-query'],
    ['second below first', '?first=5&second=4', 400, 'invalid-query'],
    ['unknown parameter', '?first=1&third=2', 400, 'invalid-query'],
    ['repeated first', '?first=1&first=2', 400, 'invalid-query'],
    ['beyond the log', `?first=1&second=${Number.MAX_SAFE_INTEGER}`, 409, 'beyond-tree'],
  ])('refuses %s (%s) with %i %s', async (_what, query, status, type) => {
    expectProblem(await consistency(query), status, type);
  });

  it('answers any first and second with 200, 400 or 409 and a machine-readable body, never a 5xx (fast-check)', async () => {
    const value = fc.oneof(
      fc.nat({ max: 200 }).map(String),
      fc.integer().map(String),
      fc.bigInt().map(String),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('1e3', '0x10', '1.5', ' 1', ''),
    );
    await fc.assert(
      fc.asyncProperty(value, fc.option(value), async (first, second) => {
        const q = new URLSearchParams({ first, ...(second === null ? {} : { second }) });
        const r = await consistency(`?${q}`);
        expect([200, 400, 409], r.text).toContain(r.status);
        if (r.status === 200) expect(operatorContract().reply('AuditConsistency')(r.json), r.text).toBe(true);
        else expect(operatorContract().reply('Problem')(r.json), r.text).toBe(true);
      }),
      { numRuns: 80 },
    );
  });

  it('is the operator’s only: no token 401, no audit:read 403, an agent identity 403', async () => {
    expect((await get('/api/v2/operator/audit/consistency?first=1', null)).status).toBe(401);
    const token = await sys.token(['agents:read']);
    const r = await get('/api/v2/operator/audit/consistency?first=1', null, {
      authorization: `Bearer ${token}`,
    });
    expectProblem(r, 403, 'insufficient-role');
    const audit = await sys.token(['audit:read']);
    const agent = await get('/api/v2/operator/audit/consistency?first=1', AGENT, {
      authorization: `Bearer ${audit}`,
    });
    expectProblem(agent, 403, 'agent-operator-refused');
  });
});

async function runVerifier(args: string[]): Promise<{ code: number; out: string }> {
  return promisify(execFile)('npm', ['run', '--silent', 'audit:prove-verify', '--', ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'silent' },
  }).then(
    (r) => ({ code: 0, out: `${r.stdout}${r.stderr}` }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      out: `${e.stdout}${e.stderr}`,
    }),
  );
}
