/**
 * A spend reservation whose Redis command timed out on the client (REDIS_COMMAND_TIMEOUT_MS,
 * 500 ms) but still ran on the server, then a retry with the same Idempotency-Key.
 *
 * Real Redis everywhere, no mocks:
 *   - Redis A (the shared test server, TEST_REDIS_URL): buckets, blocks, idempotency records;
 *   - Redis B (a throwaway redis-server): the spend ledger, paused with CLIENT PAUSE ALL, as a
 *     Redis Cluster primary holding the {spend} slot is when it stalls (or a loaded machine
 *     answers one command late). Commands sent meanwhile run when the pause ends.
 * The agent chain is the production one (registerAgentRoutes), the order domain the real one
 * (createOrderDomain on its memory store), the clients come from lib/redis.ts (500 ms timeout).
 *
 * Found by a review (session 38): a retry under the same key with another body went through
 * as the first attempt's replay, unjudged by the policy. The reservation now keeps its SKU and
 * amount, and the same order id with another one is refused (422 idempotency-key-reused).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_BLOCK_POLICY } from '../../gateway/agent/block/policy.ts';
import { redisBlockStore } from '../../gateway/agent/block/redis.ts';
import { redisIdempotencyStore } from '../../gateway/agent/idempotency/redis.ts';
import { inProcessOrders } from '../../gateway/agent/order/in-process.ts';
import { redisBucketStore } from '../../gateway/agent/rate-limit/redis.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { systemClock } from '../../lib/clock.ts';
import { createRedis, type RedisClient } from '../../lib/redis.ts';
import { createOrderDomain } from '../../subgraphs/procurement/domain/order-domain.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { redisSpendLedger } from '../../subgraphs/procurement/spend/redis.ts';
import { memoryOrderStore } from '../../subgraphs/procurement/store/memory.ts';
import { AGENT, ORDERS, validOrder } from '../procurement/support/agent.ts';
import { agentChain } from '../procurement/support/chain.ts';
import { type RedisServer, throwawayRedis } from './support/redis-server.ts';

const TIMEOUT_MS = 500; // REDIS_COMMAND_TIMEOUT_MS default
const PAUSE_MS = 1500;

let stateRedis: RedisClient;
let spendRedis: RedisClient;
let admin: Redis;
let spendServer: RedisServer;
let ledger: SpendLedger;
let app: FastifyInstance;
const domain = createOrderDomain(memoryOrderStore(), systemClock);

beforeAll(async () => {
  spendServer = await throwawayRedis();
  const settings = (url: string, timeout = TIMEOUT_MS) => ({
    REDIS_URL: url,
    REDIS_CLUSTER: false,
    REDIS_COMMAND_TIMEOUT_MS: timeout,
  });
  stateRedis = createRedis(settings(TEST_REDIS_URL));
  spendRedis = createRedis(settings(spendServer.url));
  admin = createRedis(settings(spendServer.url, 10_000)) as Redis;
  const prefix = uniquePrefix('spend-timeout');
  ledger = redisSpendLedger(spendRedis, prefix);
  // Loads the reserve script into Redis B, so the EVALSHA sent during the pause finds it.
  await ledger.reserve({
    orderId: 'warm',
    candidates: ['spiffe://example.org/none'],
    sku: 'x',
    amountCents: 1,
    now: Date.now(),
  });
  const bucketPolicy = { capacity: 100, refillPerSecond: 100 };
  app = await agentChain({
    clock: systemClock,
    blocks: redisBlockStore(stateRedis, prefix, SPEC_BLOCK_POLICY),
    buckets: redisBucketStore(stateRedis, prefix, bucketPolicy),
    bucketPolicy,
    idempotency: redisIdempotencyStore(stateRedis, prefix, { ttlMs: 60_000, inFlightMs: 30_000 }),
    orders: inProcessOrders(domain),
    spend: { ledger, withoutPolicy: 'allow' },
  });
});

afterAll(async () => {
  await app?.close();
  stateRedis?.disconnect();
  spendRedis?.disconnect();
  admin?.disconnect();
  await spendServer?.remove();
});

/** A fresh identity with its own policy: 100.00 a day, at most 50.00 an order, SKU-ABC- only. */
async function agentWithPolicy(): Promise<string> {
  const id = `${AGENT}/timeout-${randomUUID().slice(0, 8)}`;
  await ledger.putPolicy({
    subject: id,
    currency: 'USD',
    period: 'day',
    budgetCents: 100_00,
    maxPerOrderCents: 50_00,
    skuPrefixes: ['SKU-ABC-'],
    updatedAt: Date.now(),
  });
  return id;
}

const send = (identity: string, body: Record<string, unknown>, key?: string) =>
  app.inject({
    method: 'POST',
    url: ORDERS,
    remoteAddress: '127.0.0.1',
    headers: {
      'content-type': 'application/json',
      'x-spiffe-id': identity,
      ...(key ? { 'idempotency-key': key } : {}),
    },
    payload: JSON.stringify(validOrder(body)),
  });

const spent = async (identity: string) => (await ledger.status([identity], Date.now()))?.spentCents ?? 0;

/**
 * Pauses Redis B, sends the order (its reserve times out on the client: 503), then waits until
 * the pause is over and the server has run the reserve the client gave up on.
 */
async function orderWhoseReserveTimesOut(identity: string, body: Record<string, unknown>, key?: string) {
  await admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
  const started = Date.now();
  const r = await send(identity, body, key);
  const elapsed = Date.now() - started;
  const deadline = Date.now() + PAUSE_MS + 5000;
  let charged = 0;
  while (Date.now() < deadline) {
    charged = await spent(identity).catch(() => 0);
    if (charged > 0) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return { r, elapsed, charged };
}

describe('a spend reserve that timed out on the client but ran on the server', () => {
  it('precondition: 503 within the pause, nothing placed, and the amount is charged anyway', async () => {
    const id = await agentWithPolicy();
    const { r, elapsed, charged } = await orderWhoseReserveTimesOut(id, { max_budget_usd: 10 }, 'k-pre');
    expect(r.statusCode).toBe(503);
    expect(elapsed).toBeLessThan(PAUSE_MS);
    expect(charged).toBe(10_00);
  });

  it('same key, same body: the retry converges to one order charged once', async () => {
    const id = await agentWithPolicy();
    const first = await orderWhoseReserveTimesOut(id, { max_budget_usd: 10 }, 'k-same');
    expect(first.r.statusCode).toBe(503);
    const retry = await send(id, { max_budget_usd: 10 }, 'k-same');
    expect(retry.statusCode).toBe(201);
    expect(await spent(id)).toBe(10_00);
    const again = await send(id, { max_budget_usd: 10 }, 'k-same');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().order_id).toBe(retry.json().order_id);
  });

  it('no key: the 503 leaves its amount charged until the period ends (never overspent, possibly underspent: docs/spend.md)', async () => {
    const id = await agentWithPolicy();
    const first = await orderWhoseReserveTimesOut(id, { max_budget_usd: 10 });
    expect(first.r.statusCode).toBe(503);
    expect((await send(id, { max_budget_usd: 10 })).statusCode).toBe(201);
    // One order placed, two reservations: 10.00 held by an order that never existed.
    expect(await spent(id)).toBe(20_00);
  });

  it('same key, another body: refused 422 idempotency-key-reused, nothing stored or charged; the first body still places', async () => {
    const id = await agentWithPolicy();
    const first = await orderWhoseReserveTimesOut(id, { max_budget_usd: 10 }, 'k-other');
    expect(first.r.statusCode).toBe(503);
    expect(first.charged).toBe(10_00);

    // Not allowed by the policy in three ways: SKU outside SKU-ABC-, 5000.00 > 50.00 per order,
    // 5000.00 > the 90.00 left of the 100.00 budget. With a fresh key it is a 403.
    const other = { sku: 'SKU-XYZ-999999', max_budget_usd: 5000 };
    expect((await send(id, other, 'k-control')).statusCode).toBe(403);

    const placedBefore = domain.placed();
    const retry = await send(id, other, 'k-other');
    expect(retry.statusCode, retry.body).toBe(422);
    expect(String(retry.json().type)).toMatch(/idempotency-key-reused$/);
    expect(domain.placed()).toBe(placedBefore);
    expect(await spent(id)).toBe(10_00);

    // The key's first body is still its own: placed once, charged once.
    const original = await send(id, { max_budget_usd: 10 }, 'k-other');
    expect(original.statusCode).toBe(201);
    expect(domain.placed()).toBe(placedBefore + 1);
    expect(await spent(id)).toBe(10_00);
  });
});
