/**
 * The spend ledger contract (spend-ledger.contract.ts) against its two adapters: in memory and
 * the real Redis of the machine (a unique key prefix per ledger).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import { memorySpendLedger } from '../../subgraphs/procurement/spend/memory.ts';
import { candidateSubjects } from '../../subgraphs/procurement/spend/policy.ts';
import { redisSpendLedger } from '../../subgraphs/procurement/spend/redis.ts';
import { AGENT, policyOf, spendLedgerContract, T0 } from './spend-ledger.contract.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.quit());

spendLedgerContract('memory adapter', () => memorySpendLedger());
spendLedgerContract('redis adapter', () => redisSpendLedger(redis, uniquePrefix('spend')));

describe('redis adapter, a reservation written before the SKU was kept', () => {
  it('replays as before (nothing to tell it apart by) and is released with its amount', async () => {
    const prefix = uniquePrefix('spend-old');
    const l = redisSpendLedger(redis, prefix);
    await l.putPolicy(policyOf({ budgetCents: 100_00 }));
    const id = parseSpiffeId(AGENT);
    if (!id.ok) throw new Error(id.reason);
    const candidates = candidateSubjects(id.value);
    const orderId = `ord_${'7'.repeat(32)}`;
    // As the script wrote it before: subject, period, cents, period end; and its charge.
    const dayEnd = Date.UTC(2026, 1, 1);
    await redis.set(`${prefix}spend:{spend}:res:${orderId}`, `${AGENT}\nD2026-01-31\n1000\n${dayEnd}`);
    await redis.hset(`${prefix}spend:{spend}:ledger`, AGENT, 'D2026-01-31:1000');
    const again = { orderId, candidates, sku: 'SKU-ANY-000001', amountCents: 99_00, now: T0 };
    expect(await l.reserve(again)).toEqual({ kind: 'replayed' });
    expect((await l.status(candidates, T0))?.spentCents).toBe(10_00);
    expect(await l.release(orderId, T0 + 1)).toBe(10_00);
    expect((await l.status(candidates, T0))?.spentCents).toBe(0);
  });
});
