/**
 * The chain alone (registerAgentRoutes on a plain Fastify app) with state stores that fail,
 * as Redis does when it is down: every reply is a 4xx or a 503 problem with Retry-After,
 * never a 500, and nothing reaches the order domain.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryBlockStore } from '../../gateway/agent/block/memory.ts';
import { SPEC_BLOCK_POLICY } from '../../gateway/agent/block/policy.ts';
import type { BlockStore } from '../../gateway/agent/block/store.ts';
import type { AgentGatewayDeps } from '../../gateway/agent/chain.ts';
import { memoryIdempotencyStore } from '../../gateway/agent/idempotency/memory.ts';
import type { IdempotencyStore } from '../../gateway/agent/idempotency/store.ts';
import type { OrderPort } from '../../gateway/agent/order/order-port.ts';
import type { BucketStore } from '../../gateway/agent/rate-limit/store.ts';
import { AGENT, ORDERS, validOrder } from './support/agent.ts';
import { agentChain } from './support/chain.ts';

const down = () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379'));
let app: FastifyInstance;
let placed = 0;

async function chainWith(over: Partial<AgentGatewayDeps>): Promise<FastifyInstance> {
  const orders: OrderPort = {
    async place(cmd) {
      placed++;
      return {
        status: 'APPROVED',
        order_id: 'ord_x',
        allocated_budget: cmd.request.max_budget_usd,
        processed_at: 1,
      };
    },
    get: async () => null,
    list: async () => ({ orders: [], nextCursor: null }),
    cancel: async () => ({ kind: 'not-found' }),
  };
  return agentChain(
    {
      orders,
      idempotency: memoryIdempotencyStore({ ttlMs: 1000, inFlightMs: 1000 }),
      ...over,
    },
    { traceId: 'faults' },
  );
}

const send = (body = JSON.stringify(validOrder()), headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: ORDERS,
    remoteAddress: '127.0.0.1',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT, ...headers },
    payload: body,
  });

afterEach(() => app?.close());

describe('state stores down', () => {
  const failingBlocks: BlockStore = { get: down, recordError: down, reset: down, clear: down };
  const failingBuckets: BucketStore = { take: down, peek: down };
  const failingIdempotency: IdempotencyStore = { begin: down, complete: down, release: down };

  it.each([
    ['blocks', { blocks: failingBlocks }],
    ['buckets', { buckets: failingBuckets }],
  ])('%s: 503 problem with Retry-After, nothing placed', async (_name, over) => {
    app = await chainWith(over);
    const before = placed;
    const r = await send();
    expect(r.statusCode).toBe(503);
    expect(r.headers['content-type']).toMatch(/problem\+json/);
    expect(r.headers['retry-after']).toBe('1');
    expect(placed).toBe(before);
  });

  it('idempotency records: 503 for a keyed call, a call without a key still succeeds', async () => {
    app = await chainWith({ idempotency: failingIdempotency });
    expect((await send(undefined, { 'idempotency-key': 'k' })).statusCode).toBe(503);
    expect((await send()).statusCode).toBe(201);
  });

  it('a block count that cannot be written does not turn a 422 into a 5xx', async () => {
    const blocks: BlockStore = { ...memoryBlockStore(SPEC_BLOCK_POLICY), recordError: down, reset: down };
    app = await chainWith({ blocks });
    const r = await send(JSON.stringify(validOrder({ quantity: 0 })));
    expect(r.statusCode, r.body).toBe(422);
  });

  it('an order domain that throws is a 503, not a 500', async () => {
    app = await chainWith({ orders: { place: down, get: down } as unknown as OrderPort });
    const r = await send();
    expect(r.statusCode).toBe(503);
  });
});

describe('logging', () => {
  it('logs a refused identity with the trace id and the reason', async () => {
    const { pino } = await import('pino');
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s)) });
    app = await chainWith({ log });
    const r = await send(undefined, { 'x-spiffe-id': `${AGENT}-evil` });
    expect(r.statusCode).toBe(401);
    const line = lines.find((l) => l.msg === 'agent identity not verified');
    expect(line).toMatchObject({ traceId: 'faults' });
    expect(String(line?.reason)).toContain('not the procurement agent');
  });
});
