/**
 * The agent gateway's state contract (agent-state.contract.ts) against its two adapters here:
 * in memory and the real Redis of the machine (unique key prefix per store). test/cluster/
 * runs it against a Redis Cluster.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { memoryActivityStore } from '../../gateway/agent/activity/memory.ts';
import { redisActivityStore } from '../../gateway/agent/activity/redis.ts';
import { memoryBlockStore } from '../../gateway/agent/block/memory.ts';
import { SPEC_BLOCK_POLICY } from '../../gateway/agent/block/policy.ts';
import { redisBlockStore } from '../../gateway/agent/block/redis.ts';
import { memoryIdempotencyStore } from '../../gateway/agent/idempotency/memory.ts';
import { redisIdempotencyStore } from '../../gateway/agent/idempotency/redis.ts';
import { memoryBucketStore } from '../../gateway/agent/rate-limit/memory.ts';
import { redisBucketStore } from '../../gateway/agent/rate-limit/redis.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { agentStateContract, policy, times } from './agent-state.contract.ts';

const silent = pino({ level: 'silent' });
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.quit());

agentStateContract('memory adapter', () => ({
  blocks: () => memoryBlockStore(SPEC_BLOCK_POLICY),
  buckets: (p = policy) => memoryBucketStore(p),
  idempotency: () => memoryIdempotencyStore(times),
  activity: (max) => memoryActivityStore(max),
}));

agentStateContract('redis adapter', () => {
  const prefix = uniquePrefix('agent-state');
  return {
    blocks: () => redisBlockStore(redis, prefix, SPEC_BLOCK_POLICY),
    buckets: (p = policy) => redisBucketStore(redis, prefix, p),
    idempotency: () => redisIdempotencyStore(redis, prefix, times),
    activity: (max) => redisActivityStore(redis, uniquePrefix('activity'), silent, max),
  };
});
