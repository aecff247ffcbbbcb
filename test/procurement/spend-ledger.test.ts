/**
 * The spend ledger contract (spend-ledger.contract.ts) against its two adapters: in memory and
 * the real Redis of the machine (a unique key prefix per ledger).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { memorySpendLedger } from '../../subgraphs/procurement/spend/memory.ts';
import { redisSpendLedger } from '../../subgraphs/procurement/spend/redis.ts';
import { spendLedgerContract } from './spend-ledger.contract.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.quit());

spendLedgerContract('memory adapter', () => memorySpendLedger());
spendLedgerContract('redis adapter', () => redisSpendLedger(redis, uniquePrefix('spend')));
