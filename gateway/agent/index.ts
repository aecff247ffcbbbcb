import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../lib/config.ts';
import type { SubgraphModule } from '../../lib/graphql/subgraph.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import type { Platform } from '../../lib/platform.ts';
import { checkoutSessionStoreFor } from '../../subgraphs/procurement/checkout/cached.ts';
import { orderDomainOf, spendLedgerOf } from '../../subgraphs/procurement/index.ts';
import { spendLedgerFor } from '../../subgraphs/procurement/spend/index.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import { feedingActivity } from './activity/from-audit.ts';
import { memoryActivityStore } from './activity/memory.ts';
import { redisActivityStore } from './activity/redis.ts';
import type { ActivityStore } from './activity/store.ts';
import type { AuditLog } from './audit/log.ts';
import { mountAudit } from './audit/mount.ts';
import type { AuditProofs } from './audit/proofs.ts';
import type { AuditReport } from './audit/verify.ts';
import { memoryBlockStore } from './block/memory.ts';
import { type BlockPolicy, SPEC_BLOCK_POLICY } from './block/policy.ts';
import { redisBlockStore } from './block/redis.ts';
import type { BlockStore } from './block/store.ts';
import { type CatalogSlot, catalogSlot } from './catalog/products.ts';
import { registerAgentRoutes } from './chain.ts';
import { memoryIdempotencyStore } from './idempotency/memory.ts';
import { redisIdempotencyStore } from './idempotency/redis.ts';
import type { IdempotencyStore } from './idempotency/store.ts';
import { loadAgentKeys, SignatureKeysError } from './identity/signature/keys.ts';
import { memoryNonceStore } from './identity/signature/nonce-memory.ts';
import { redisNonceStore } from './identity/signature/nonce-redis.ts';
import { type AgentMetrics, agentMetrics, type SpendRefusalReason } from './metrics.ts';
import { httpOrders } from './order/http.ts';
import { inProcessOrders } from './order/in-process.ts';
import type { OrderPort } from './order/order-port.ts';
import type { BucketPolicy } from './rate-limit/bucket.ts';
import { memoryBucketStore } from './rate-limit/memory.ts';
import { redisBucketStore } from './rate-limit/redis.ts';
import type { BucketStore } from './rate-limit/store.ts';
import { type ScopePolicy, ScopePolicyError, scopePolicy } from './scope/policy.ts';
import { tokenVerifierFor } from './scope/token.ts';

/** The chain's own parts, for the protocol edges that run the same steps (ACP: gateway/agent/acp/). */
export interface AgentChainParts {
  readonly policy: ScopePolicy;
  readonly blocks: BlockStore;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly idempotency: IdempotencyStore;
  readonly orders: OrderPort;
  /** The audit log as the chain writes it (feeding the activity view). */
  readonly audit: AuditLog;
  readonly spend: {
    readonly ledger: SpendLedger;
    readonly withoutPolicy: 'allow' | 'deny';
    /** Counts a refusal decided before the ledger (metrics.ts); the ledger counts its own. */
    readonly refused?: (reason: SpendRefusalReason) => void;
  };
}

/** The agent gateway's state, for the operator API (gateway/operator/): the same stores the chain uses. */
export interface AgentGatewayState {
  /** The parts the protocol edges share with the chain. */
  readonly chain: AgentChainParts;
  readonly blocks: BlockStore;
  readonly blockPolicy: BlockPolicy;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly activity: ActivityStore;
  /** The audit log itself (an operator's entry is not agent activity). */
  readonly audit: AuditLog;
  /** The chain checked against its keys and checkpoints (verify.ts). */
  verifyAudit(): Promise<AuditReport>;
  /** Inclusion and consistency proofs over the audit's Merkle tree; absent with ORDER_STORE=memory. */
  readonly auditProofs?: AuditProofs;
  /** Where GET /v2/products finds the catalog service, once the edge has built it. */
  readonly catalog: CatalogSlot;
}

/**
 * Builds the agent purchase gateway from the platform: state in Redis when REDIS_URL is set
 * (shared by replicas) else in memory; the order domain in process when the procurement
 * module runs here (embedded) else over HTTP (distributed); the audit log in the SQL store.
 * One step a function, in the order they open (platform.onClose closes in reverse).
 */
export async function mountAgentGateway(
  app: FastifyInstance,
  platform: Platform,
  procurement: SubgraphModule | undefined,
): Promise<AgentGatewayState> {
  const { config } = platform;
  const policy = await configured(ScopePolicyError, () =>
    scopePolicy(config.AGENT_SCOPE_POLICY, config.SPIFFE_TRUST_DOMAINS),
  );
  const signatures = await signaturesOf(platform);
  const orders = orderPortOf(platform, procurement);
  const watched = agentMetrics(platform.metrics);
  const { audit, verifyAudit, proofs } = await mountAudit(app, platform, watched);
  const activity = platform.redis
    ? redisActivityStore(platform.redis, config.REDIS_KEY_PREFIX, platform.log)
    : memoryActivityStore();
  platform.onClose(() => activity.close());
  const chain = chainPartsOf(platform, procurement, { policy, orders, watched, audit, activity });
  const catalog = catalogSlot();
  await registerAgentRoutes(app, {
    clock: platform.clock,
    log: platform.log,
    identity: {
      trustDomains: config.SPIFFE_TRUST_DOMAINS,
      trustedProxies: config.TRUSTED_PROXIES,
      servedHosts: servedHosts(config),
      tls: Boolean(config.TLS_CERT_FILE && config.TLS_KEY_FILE),
      signatures,
    },
    ...chain,
    tokens: await tokenVerifierFor(config),
    bodyLimit: config.ORDER_BODY_LIMIT_BYTES,
    ...(proofs ? { auditProofs: proofs } : {}),
    sessions: checkoutSessionStoreFor(platform.db),
    catalog: { slot: catalog, defaultRegion: config.ACP_DEFAULT_REGION },
  });
  return {
    chain,
    blocks: chain.blocks,
    blockPolicy: SPEC_BLOCK_POLICY,
    buckets: chain.buckets,
    bucketPolicy: chain.bucketPolicy,
    activity,
    audit,
    verifyAudit: watched.verify(verifyAudit),
    ...(proofs ? { auditProofs: proofs } : {}),
    catalog,
  };
}

/** A configuration value's own error (`kind`) as the ConfigError that stops the start. */
async function configured<T>(kind: new (...args: never[]) => Error, read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof kind) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
}

/** Step 1's HTTP message signatures: the agents' keys, and nonces shared by the replicas. */
async function signaturesOf(platform: Platform) {
  const { config, redis, clock } = platform;
  return {
    keys: await configured(SignatureKeysError, () => loadAgentKeys(config.AGENT_SIGNATURE_KEYS)),
    // Replicas share the nonces (a request replayed to another replica is refused there too).
    nonces: redis ? redisNonceStore(redis, config.REDIS_KEY_PREFIX) : memoryNonceStore(),
    clock,
    skewSeconds: config.AGENT_SIGNATURE_CLOCK_SKEW_SECONDS,
    maxValiditySeconds: config.AGENT_SIGNATURE_MAX_VALIDITY_SECONDS,
  };
}

/** The order domain: in process when the procurement module runs here, else over HTTP. */
function orderPortOf(platform: Platform, procurement: SubgraphModule | undefined): OrderPort {
  const domain = orderDomainOf(procurement);
  if (domain) return inProcessOrders(domain);
  const { config } = platform;
  const remote = httpOrders(
    config.PROCUREMENT_URL,
    config.GATEWAY_SHARED_SECRET,
    config.ORDER_DOMAIN_TIMEOUT_MS,
  );
  platform.onClose(() => remote.close());
  return remote;
}

/** The chain's stores: in Redis when REDIS_URL is set (shared by replicas), else in memory. */
function chainPartsOf(
  platform: Platform,
  procurement: SubgraphModule | undefined,
  d: {
    policy: ScopePolicy;
    orders: OrderPort;
    watched: AgentMetrics;
    audit: AuditLog;
    activity: ActivityStore;
  },
): AgentChainParts {
  const { config, redis } = platform;
  const prefix = config.REDIS_KEY_PREFIX;
  const bucketPolicy = {
    capacity: config.RATE_LIMIT_CAPACITY,
    refillPerSecond: config.RATE_LIMIT_REFILL_PER_SECOND,
  };
  // The in-flight hold must outlast any order (ORDER_DOMAIN_TIMEOUT_MS) yet free a key soon
  // after the replica holding it was killed.
  const times = { ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000, inFlightMs: config.IDEMPOTENCY_IN_FLIGHT_MS };
  return {
    policy: d.policy,
    blocks: d.watched.blocks(
      redis ? redisBlockStore(redis, prefix, SPEC_BLOCK_POLICY) : memoryBlockStore(SPEC_BLOCK_POLICY),
    ),
    buckets: redis ? redisBucketStore(redis, prefix, bucketPolicy) : memoryBucketStore(bucketPolicy),
    bucketPolicy,
    idempotency: redis ? redisIdempotencyStore(redis, prefix, times) : memoryIdempotencyStore(times),
    orders: d.orders,
    audit: feedingActivity(d.audit, d.activity),
    // Embedded: the procurement module's ledger, where operators' policies are; else Redis.
    spend: {
      ledger: d.watched.spend(
        spendLedgerOf(procurement) ?? spendLedgerFor(platform),
        config.SPEND_POLICY_DEFAULT,
      ),
      withoutPolicy: config.SPEND_POLICY_DEFAULT,
      refused: d.watched.spendRefused,
    },
  };
}
