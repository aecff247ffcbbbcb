/**
 * The operator API when the agent state's Redis crashes (a throwaway redis-server, never the
 * shared one): 503 problems with Retry-After, no crash, and the API answers again when Redis is
 * back, without a restart of ours.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../../harness/services.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type RedisServer, throwawayRedis } from '../faults/support/redis-server.ts';
import { freshAgent, post } from '../procurement/support/agent.ts';
import { eventually, expectProblem, expectReply, op } from './support.ts';

describe('operator API while Redis is down', () => {
  let redis: RedisServer;
  let sys: TestSystem;
  let token: string;

  beforeAll(async () => {
    redis = await throwawayRedis();
    sys = await startEmbedded({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: uniquePrefix('op-faults') });
    token = await sys.token(['agents:read', 'agents:admin', 'audit:read'], 'ops-dora');
  }, 60_000);
  afterAll(async () => {
    await sys?.close();
    await redis?.remove();
  });

  it('answers 503 with Retry-After while Redis is down and recovers when it is back', async () => {
    const id = freshAgent('faults');
    expect((await post(sys.url, { spiffe: id, body: '{}' })).status).toBe(422);
    await eventually(
      () => op(sys.url, '/api/v2/operator/agents', { token }),
      (r) => r.json?.agents?.length === 1,
    );
    await redis.crash();
    const list = await op(sys.url, '/api/v2/operator/agents', { token });
    expectProblem(list, 503, 'operator-state-unavailable');
    expect(list.headers.get('retry-after')).toMatch(/^\d+$/);
    const unblock = await op(sys.url, '/api/v2/operator/agents/unblock', {
      method: 'POST',
      token,
      body: JSON.stringify({ spiffe_id: id }),
    });
    expectProblem(unblock, 503, 'operator-state-unavailable');
    // The audit log is in the SQL store, not in Redis: still searchable.
    expectReply(await op(sys.url, '/api/v2/operator/audit?limit=1', { token }), 'AuditPage');

    await redis.start();
    const back = await eventually(
      () => op(sys.url, '/api/v2/operator/agents', { token }),
      (r) => r.status === 200,
    );
    expectReply(back, 'AgentPage');
  });
});
