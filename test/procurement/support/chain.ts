/**
 * The agent chain alone (registerAgentRoutes on a plain Fastify app) on in-memory state, for
 * tests that swap one dependency (a failing store, a spend ledger, a stub order domain).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { memoryAuditLog } from '../../../gateway/agent/audit/memory.ts';
import { memoryBlockStore } from '../../../gateway/agent/block/memory.ts';
import { SPEC_BLOCK_POLICY } from '../../../gateway/agent/block/policy.ts';
import { catalogSlot } from '../../../gateway/agent/catalog/products.ts';
import { type AgentGatewayDeps, registerAgentRoutes } from '../../../gateway/agent/chain.ts';
import { memoryIdempotencyStore } from '../../../gateway/agent/idempotency/memory.ts';
import { memoryBucketStore } from '../../../gateway/agent/rate-limit/memory.ts';
import { scopePolicy } from '../../../gateway/agent/scope/policy.ts';
import { ManualClock } from '../../../lib/clock.ts';
import { decorateRehearsals } from '../../../lib/http/rehearsal.ts';
import { servedHosts } from '../../../lib/http/served-hosts.ts';
import { createLogger } from '../../../lib/logger.ts';
import { memorySpendLedger } from '../../../subgraphs/procurement/spend/memory.ts';

export async function agentChain(
  over: Partial<AgentGatewayDeps> & Pick<AgentGatewayDeps, 'orders'>,
  opts: { traceId?: string } = {},
): Promise<FastifyInstance> {
  const a = Fastify();
  a.decorateRequest('traceId', '');
  decorateRehearsals(a);
  if (opts.traceId !== undefined) {
    const traceId = opts.traceId;
    a.addHook('onRequest', async (req) => {
      req.traceId = traceId;
    });
  }
  const bucketPolicy = { capacity: 100, refillPerSecond: 100 };
  await registerAgentRoutes(a, {
    clock: new ManualClock(),
    log: createLogger({ LOG_LEVEL: 'silent' }),
    identity: {
      trustDomains: ['example.org'],
      trustedProxies: ['127.0.0.1'],
      servedHosts: servedHosts({ SERVED_HOSTS: [], HOST: '127.0.0.1', PORT: 8080 }),
      tls: false,
    },
    policy: scopePolicy(undefined, ['example.org']),
    tokens: { verify: async () => ({ ok: false, reason: 'unused' }) },
    blocks: memoryBlockStore(SPEC_BLOCK_POLICY),
    buckets: memoryBucketStore(bucketPolicy),
    bucketPolicy,
    idempotency: memoryIdempotencyStore({ ttlMs: 60_000, inFlightMs: 60_000 }),
    audit: memoryAuditLog(),
    bodyLimit: 4096,
    spend: { ledger: memorySpendLedger(), withoutPolicy: 'allow' },
    catalog: { slot: catalogSlot(), defaultRegion: 'US' },
    ...over,
  });
  await a.ready();
  return a;
}
