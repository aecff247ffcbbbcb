/**
 * The signature nonce contract (nonce-store.contract.ts) against its two adapters: in memory
 * and the machine's real Redis (unique key prefix per store); test/cluster/ runs it on a
 * Redis Cluster. Plus the memory store's bound, which never forgets a live nonce.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryNonceStore } from '../../gateway/agent/identity/signature/nonce-memory.ts';
import { redisNonceStore } from '../../gateway/agent/identity/signature/nonce-redis.ts';
import { NonceStoreFull } from '../../gateway/agent/identity/signature/nonce-store.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { nonceStoreContract } from './nonce-store.contract.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.quit());

nonceStoreContract('memory adapter', () => memoryNonceStore());
nonceStoreContract('redis adapter', () => redisNonceStore(redis, uniquePrefix('nonce')));

describe('the memory nonce store bound', () => {
  const T0 = Date.UTC(2026, 0, 1);

  it('refuses a new nonce when full of live ones instead of forgetting one', async () => {
    const s = memoryNonceStore(3);
    for (const n of ['a', 'b', 'c']) expect(await s.remember('k', n, T0 + 1000, T0)).toBe(true);
    await expect(s.remember('k', 'd', T0 + 1000, T0)).rejects.toBeInstanceOf(NonceStoreFull);
    expect(await s.remember('k', 'a', T0 + 1000, T0)).toBe(false);
  });

  it('makes room by sweeping the nonces whose time is past', async () => {
    const s = memoryNonceStore(3);
    for (const n of ['a', 'b', 'c']) expect(await s.remember('k', n, T0 + 1000, T0)).toBe(true);
    expect(await s.remember('k', 'd', T0 + 2000, T0 + 1000)).toBe(true);
    expect(await s.remember('k', 'd', T0 + 2000, T0 + 1001)).toBe(false);
  });
});
