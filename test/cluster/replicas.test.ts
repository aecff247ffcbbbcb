/**
 * The two-replica exactness suites, unchanged, on a real 3-primary Redis Cluster started for
 * this file: one token bucket, one block, one idempotency record and one spend budget across two
 * gateway processes; one redemption cap across two promotions processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoGatewaySuite } from '../procurement/two-gateways.suite.ts';
import { redemptionReplicasSuite } from '../promotions/redemption-replicas.suite.ts';
import { type RedisClusterHandle, startRedisCluster } from '../support/redis-cluster.ts';

let cluster: RedisClusterHandle;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(() => cluster?.stop());

twoGatewaySuite('a Redis Cluster', () => cluster.env);
redemptionReplicasSuite('a Redis Cluster', () => cluster.env);

describe('where the replicas kept their state', () => {
  it('is the cluster: buckets, blocks and redemption counters spread over its primaries', async () => {
    const redis = cluster.client();
    try {
      await redis.ping(); // connects and learns the primaries
      const keysOf = async (pattern: string) =>
        (
          await Promise.all(
            redis
              .nodes('master')
              .map(async (node) => (await node.scan(0, 'MATCH', pattern, 'COUNT', 10_000))[1]),
          )
        ).map((keys) => keys.length);
      const perNode = await keysOf('*');
      expect(perNode.filter((n) => n > 0).length).toBeGreaterThan(1);
      expect((await keysOf('*agent:bucket:*')).reduce((a, b) => a + b)).toBeGreaterThan(0);
      expect((await keysOf('*agent:block:*')).reduce((a, b) => a + b)).toBeGreaterThan(0);
      expect((await keysOf('*promo:*:redemptions')).reduce((a, b) => a + b)).toBeGreaterThan(0);
      expect((await keysOf('*spend:{spend}:ledger')).reduce((a, b) => a + b)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
