/**
 * The operator API against two gateway replicas of the distributed topology sharing the
 * machine's Redis and Postgres (each replica built in this process with its own platform, Redis
 * connections and stores, as `npm run start:gateway` builds it): what one replica sees of the
 * agents, the other sees too, and an unblock on one holds for both.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDistributedGateway, type RunningSystem } from '../../gateway/topology.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { testConfig } from '../../harness/system.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { Config } from '../../lib/config.ts';
import { freshAgent, post } from '../procurement/support/agent.ts';
import { blockAgent, eventually, expectReply, op } from './support.ts';

const AGENTS = '/api/v2/operator/agents?limit=200';
const UNBLOCK = '/api/v2/operator/agents/unblock';

type Agent = {
  spiffe_id: string;
  calls_last_minute: number;
  block: { blocked: boolean; consecutive_errors: number };
};

describe('operator API on two gateway replicas sharing Redis', () => {
  let store: Awaited<ReturnType<typeof freshPostgres>>;
  let config: Config;
  let g1: RunningSystem;
  let g2: RunningSystem;
  let token: string;

  beforeAll(async () => {
    store = await freshPostgres('operator');
    config = testConfig({
      DATABASE_URL: store.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniquePrefix('operator'),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-operator-')),
      GATEWAY_SHARED_SECRET: 'operator-test-secret-0123456789abc',
      RATE_LIMIT_CAPACITY: '50',
      RATE_LIMIT_REFILL_PER_SECOND: '0.001',
    });
    g1 = await buildDistributedGateway(config);
    await g1.listen(0);
    g2 = await buildDistributedGateway(config);
    await g2.listen(0);
    token = await mintDevToken(config, {
      subject: 'ops-carol',
      roles: ['agents:read', 'agents:admin', 'audit:read'],
    });
  }, 60_000);

  afterAll(async () => {
    await g1?.close();
    await g2?.close();
    await store?.drop();
  });

  const agentOn = async (gw: RunningSystem, id: string, holds: (a: Agent | undefined) => boolean) =>
    eventually(async () => {
      const r = await op(gw.url, AGENTS, { token });
      expectReply(r, 'AgentPage');
      return (r.json.agents as Agent[]).find((a) => a.spiffe_id === id);
    }, holds);

  it('counts calls made through both replicas in one activity, seen from either', async () => {
    const id = freshAgent('two');
    for (const gw of [g1, g2, g1, g2])
      expect((await post(gw.url, { spiffe: id, body: '{}' })).status).toBe(422);
    for (const gw of [g1, g2]) {
      const a = await agentOn(gw, id, (x) => x?.calls_last_minute === 4);
      expect(a?.calls_last_minute).toBe(4);
      expect(a?.block.consecutive_errors).toBe(4);
    }
  });

  it('shows an agent blocked through one replica as blocked on the other; unblock on one clears both', async () => {
    const id = freshAgent('blocked');
    let n = 0;
    // Bad calls alternate between the replicas: the count and the block are shared.
    await blockAgent(() => (n++ % 2 === 0 ? g1.url : g2.url), id);
    expect((await post(g2.url, { spiffe: id })).status).toBe(429);
    expect((await agentOn(g2, id, (x) => x?.block.blocked === true))?.block.blocked).toBe(true);
    expect((await agentOn(g1, id, (x) => x?.block.blocked === true))?.block.blocked).toBe(true);

    const r = await op(g1.url, UNBLOCK, { method: 'POST', token, body: JSON.stringify({ spiffe_id: id }) });
    expectReply(r, 'UnblockResult');
    expect(r.json).toMatchObject({ was_blocked: true, unblocked_by: 'ops-carol' });

    for (const gw of [g1, g2]) {
      const a = await agentOn(gw, id, (x) => x?.block.blocked === false);
      expect(a?.block).toMatchObject({ blocked: false, consecutive_errors: 0 });
    }
    // The other replica lets the agent through again (to the contract step: no order domain here).
    expect((await post(g2.url, { spiffe: id, body: '{}' })).status).toBe(422);
    // And the unblock is in the shared audit log, read through the other replica.
    const audit = await op(g2.url, `/api/v2/operator/audit?spiffe_id=${encodeURIComponent(id)}&limit=5`, {
      token,
    });
    expectReply(audit, 'AuditPage');
    expect(audit.json.entries.map((e: { reason: string }) => e.reason)).toContain(
      'unblocked by operator ops-carol: was blocked, 0 consecutive errors cleared',
    );
  });

  it('verifies the shared audit chain from either replica', async () => {
    for (const gw of [g1, g2]) {
      const r = await op(gw.url, '/api/v2/operator/audit/verify', { token });
      expectReply(r, 'AuditVerification');
      expect(r.json.ok).toBe(true);
      expect(r.json.entries).toBeGreaterThan(0);
    }
  });
});
