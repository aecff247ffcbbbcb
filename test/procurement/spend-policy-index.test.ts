/**
 * The spend policy index (subgraphs/procurement/spend/policy-index.ts) over the real Redis
 * ledger: it passes the ledger contract unchanged; a policy set through one process is enforced
 * by another once the change event arrives; and an order of an identity without a policy is
 * decided without Redis, so losing the spend shard stops only the identities that have one.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { parseSpiffeId } from '../../lib/auth/spiffe.ts';
import { createMemoryBus } from '../../lib/events/memory.ts';
import { createLogger } from '../../lib/logger.ts';
import { candidateSubjects } from '../../subgraphs/procurement/spend/policy.ts';
import { withPolicyIndex } from '../../subgraphs/procurement/spend/policy-index.ts';
import { redisSpendLedger } from '../../subgraphs/procurement/spend/redis.ts';
import { throwawayRedis } from '../faults/support/redis-server.ts';
import { AGENT, policyOf, spendLedgerContract, T0 } from './spend-ledger.contract.ts';

const log = createLogger({ LOG_LEVEL: 'silent' });
const candidates = (id: string) => {
  const r = parseSpiffeId(id);
  if (!r.ok) throw new Error(r.reason);
  return candidateSubjects(r.value);
};
let seq = 0;
const order = (id: string, amountCents: number) => ({
  orderId: `ord_${(++seq).toString(16).padStart(32, 'a')}`,
  candidates: candidates(id),
  sku: 'SKU-ELC-000001',
  amountCents,
  now: T0,
});
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
};

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => redis.quit());

spendLedgerContract('redis adapter behind the policy index', () =>
  withPolicyIndex(
    redisSpendLedger(redis, uniquePrefix('spend-idx')),
    createMemoryBus('test', () => {}),
    log,
  ),
);

describe('the spend policy index', () => {
  it('a policy set through one process is enforced by another once the change event arrives', async () => {
    const prefix = uniquePrefix('spend-idx');
    const bus = createMemoryBus('test', () => {});
    const operator = withPolicyIndex(redisSpendLedger(redis, prefix), bus, log);
    const gateway = withPolicyIndex(redisSpendLedger(redis, prefix), bus, log);
    await Promise.all([operator.ready(), gateway.ready()]);
    const team = `${AGENT}/idx-${seq}`;
    expect((await gateway.reserve(order(`${team}/a`, 50_00))).kind).toBe('no-policy');
    await operator.putPolicy(policyOf({ subject: team, budgetCents: 10_00 }));
    await until(async () => (await gateway.status(candidates(`${team}/a`), T0)) !== null);
    expect((await gateway.reserve(order(`${team}/a`, 50_00))).kind).toBe('refused');
    expect((await gateway.reserve(order(`${team}/b`, 10_00))).kind).toBe('reserved');
    await operator.deletePolicy(team);
    await until(async () => (await gateway.status(candidates(`${team}/a`), T0)) === null);
    expect((await gateway.reserve(order(`${team}/a`, 50_00))).kind).toBe('no-policy');
    operator.close();
    gateway.close();
  });

  it('is not ready while the index is unknown (Redis down at start), and is once a read succeeds', async () => {
    const server = await throwawayRedis();
    await server.crash();
    const client = new Redis(server.url, {
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      enableOfflineQueue: false,
      retryStrategy: () => 100,
    });
    client.on('error', () => {}); // refused connections while the server is down, by design
    try {
      const ledger = withPolicyIndex(
        redisSpendLedger(client, 'idx-ready:'),
        createMemoryBus('test', () => {}),
        log,
      );
      await expect(ledger.ready()).rejects.toThrow(/not read yet/);
      // Unknown: an identity without a policy still needs Redis (and fails closed).
      await expect(ledger.reserve(order(`${AGENT}/free`, 1_00))).rejects.toThrow();
      await server.start();
      await expect
        .poll(
          () =>
            ledger.ready().then(
              () => 'ready',
              (e: Error) => e.message,
            ),
          { timeout: 10_000 },
        )
        .toBe('ready');
      await server.crash();
      expect((await ledger.reserve(order(`${AGENT}/free`, 1_00))).kind).toBe('no-policy');
      await expect(ledger.ready()).resolves.toBeUndefined();
      ledger.close();
    } finally {
      client.disconnect();
      await server.remove();
    }
  });

  it('decides an identity without a policy while Redis is gone; one with a policy fails closed', async () => {
    const server = await throwawayRedis();
    const client = new Redis(server.url, {
      maxRetriesPerRequest: 0,
      commandTimeout: 1000,
      retryStrategy: () => 200,
    });
    try {
      const ledger = withPolicyIndex(
        redisSpendLedger(client, 'idx:'),
        createMemoryBus('test', () => {}),
        log,
      );
      await ledger.ready();
      await ledger.putPolicy(policyOf({ subject: `${AGENT}/limited`, budgetCents: 10_00 }));
      expect((await ledger.reserve(order(`${AGENT}/limited`, 1_00))).kind).toBe('reserved');
      await server.crash();
      expect((await ledger.reserve(order(`${AGENT}/free`, 1_00))).kind).toBe('no-policy');
      expect(await ledger.status(candidates(`${AGENT}/free`), T0)).toBeNull();
      await expect(ledger.reserve(order(`${AGENT}/limited`, 1_00))).rejects.toThrow();
      ledger.close();
    } finally {
      client.disconnect();
      await server.remove();
    }
  });
});
