/**
 * The shared-state contract suites, unchanged, against a real 3-primary Redis Cluster started
 * for this file: agent state (buckets, blocks, idempotency records, signature nonces), spend
 * ledger, price cache, redemption counters and the event stream. Keys of one entity share a slot through their hash tag; a batch
 * over many entities spans every primary.
 */
import type { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisActivityStore } from '../../gateway/agent/activity/redis.ts';
import { SPEC_BLOCK_POLICY } from '../../gateway/agent/block/policy.ts';
import { redisBlockStore } from '../../gateway/agent/block/redis.ts';
import { redisIdempotencyStore } from '../../gateway/agent/idempotency/redis.ts';
import { redisNonceStore } from '../../gateway/agent/identity/signature/nonce-redis.ts';
import { redisBucketStore } from '../../gateway/agent/rate-limit/redis.ts';
import { uniquePrefix } from '../../harness/services.ts';
import { createRedis } from '../../lib/redis.ts';
import { createRedisPriceCache } from '../../subgraphs/pricing/cache/redis.ts';
import { redisSpendLedger } from '../../subgraphs/procurement/spend/redis.ts';
import { createRedisRedemptionStore } from '../../subgraphs/promotions/store/redemptions-redis.ts';
import { eventBusContract, streamsTopology } from '../foundation/event-bus.contract.ts';
import { priceCacheContract, versionedPriceCacheContract } from '../pricing/price-cache.contract.ts';
import { agentStateContract, policy, times } from '../procurement/agent-state.contract.ts';
import { nonceStoreContract } from '../procurement/nonce-store.contract.ts';
import { spendLedgerContract } from '../procurement/spend-ledger.contract.ts';
import { redemptionStoreContract } from '../promotions/redemption-store.contract.ts';
import { type RedisClusterHandle, startRedisCluster } from '../support/redis-cluster.ts';

let cluster: RedisClusterHandle;
let redis: Cluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = cluster.client();
}, 60_000);
afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

agentStateContract('Redis Cluster adapter', () => {
  const prefix = uniquePrefix('agent-state');
  return {
    blocks: () => redisBlockStore(redis, prefix, SPEC_BLOCK_POLICY),
    buckets: (p = policy) => redisBucketStore(redis, prefix, p),
    idempotency: () => redisIdempotencyStore(redis, prefix, times),
    activity: (max) => redisActivityStore(redis, uniquePrefix('activity'), pino({ level: 'silent' }), max),
  };
});

nonceStoreContract('Redis Cluster adapter', () => redisNonceStore(redis, uniquePrefix('nonce')));
// Every spend key shares the {spend} hash tag: each script's keys are on one slot.
spendLedgerContract('Redis Cluster adapter', () => redisSpendLedger(redis, uniquePrefix('spend')));

priceCacheContract('Redis Cluster', (clock) => createRedisPriceCache(redis, uniquePrefix('price'), clock));
versionedPriceCacheContract('Redis Cluster', (clock) =>
  createRedisPriceCache(redis, uniquePrefix('price'), clock),
);

redemptionStoreContract('Redis Cluster (atomic script, one slot per customer)', async () => ({
  store: createRedisRedemptionStore(redis, uniquePrefix('promo')),
  close: async () => {},
}));

eventBusContract('Redis Streams on Redis Cluster', async () =>
  streamsTopology((use) => createRedis(cluster.settings, use), `${uniquePrefix('bus')}events`),
);

describe('the cluster under the suites', () => {
  it('is a real cluster: three primaries, each holding some of the suites keys', async () => {
    expect(redis.nodes('master')).toHaveLength(3);
    const sizes = await Promise.all(redis.nodes('master').map((n) => n.dbsize()));
    for (const size of sizes) expect(size).toBeGreaterThan(0);
  });

  it('refuses a multi-key command across slots, which no adapter sends', async () => {
    await expect(redis.del('ac-probe:{a}', 'ac-probe:{b}')).rejects.toThrow(/CROSSSLOT/);
  });
});
