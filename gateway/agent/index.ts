import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../lib/config.ts';
import { migrate } from '../../lib/db/index.ts';
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
import {
  checkpointDir,
  createCheckpointer,
  openCheckpointKeys,
  readCheckpoints,
} from './audit/checkpoint.ts';
import { auditKeysFile, FileAuditKeys } from './audit/keys.ts';
import type { AuditLog } from './audit/log.ts';
import { memoryAuditLog } from './audit/memory.ts';
import { auditMigrations } from './audit/migrations.ts';
import { type AuditProofs, auditProofs } from './audit/proofs.ts';
import { readAudit, readTail, sqlAuditLog } from './audit/sql.ts';
import { auditTree } from './audit/tree.ts';
import { AUDIT_KEYS_PATH } from './audit/tree-head.ts';
import { type AuditReport, verifyAuditLog } from './audit/verify.ts';
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
import { agentMetrics, type SpendRefusalReason } from './metrics.ts';
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
 */
export async function mountAgentGateway(
  app: FastifyInstance,
  platform: Platform,
  procurement: SubgraphModule | undefined,
): Promise<AgentGatewayState> {
  const { config, redis, clock, log } = platform;
  const prefix = config.REDIS_KEY_PREFIX;
  const bucketPolicy = {
    capacity: config.RATE_LIMIT_CAPACITY,
    refillPerSecond: config.RATE_LIMIT_REFILL_PER_SECOND,
  };
  // The in-flight hold must outlast any order (ORDER_DOMAIN_TIMEOUT_MS) yet free a key soon
  // after the replica holding it was killed.
  const times = { ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000, inFlightMs: config.IDEMPOTENCY_IN_FLIGHT_MS };

  let policy: ScopePolicy;
  try {
    policy = scopePolicy(config.AGENT_SCOPE_POLICY, config.SPIFFE_TRUST_DOMAINS);
  } catch (err) {
    if (err instanceof ScopePolicyError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }

  let agentKeys: Awaited<ReturnType<typeof loadAgentKeys>>;
  try {
    agentKeys = await loadAgentKeys(config.AGENT_SIGNATURE_KEYS);
  } catch (err) {
    if (err instanceof SignatureKeysError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
  const signatures = {
    keys: agentKeys,
    // Replicas share the nonces (a request replayed to another replica is refused there too).
    nonces: redis ? redisNonceStore(redis, prefix) : memoryNonceStore(),
    clock,
    skewSeconds: config.AGENT_SIGNATURE_CLOCK_SKEW_SECONDS,
    maxValiditySeconds: config.AGENT_SIGNATURE_MAX_VALIDITY_SECONDS,
  };

  const domain = orderDomainOf(procurement);
  let orders: OrderPort;
  if (domain) orders = inProcessOrders(domain);
  else {
    const remote = httpOrders(
      config.PROCUREMENT_URL,
      config.GATEWAY_SHARED_SECRET,
      config.ORDER_DOMAIN_TIMEOUT_MS,
    );
    platform.onClose(() => remote.close());
    orders = remote;
  }

  const watched = agentMetrics(platform.metrics);
  let audit: AuditLog;
  let verifyAudit: () => Promise<AuditReport>;
  let proofs: AuditProofs | undefined;
  if (config.ORDER_STORE === 'memory') {
    const memory = memoryAuditLog();
    audit = memory;
    verifyAudit = () => memory.verify();
  } else {
    await migrate(platform.db, auditMigrations);
    // Link keys and checkpoint keys live in files, never in the database the log is in.
    const keys = FileAuditKeys.open(auditKeysFile(config), clock);
    const checkpointKeys = await openCheckpointKeys(config, clock);
    const tail = await readTail(platform.db);
    // The signed head never moves back: a log that ends before it was cut while this process
    // was down (or by someone since); say so at once, verify reports the missing entries.
    const signedSeq = (await readCheckpoints(checkpointDir(config), checkpointKeys)).head?.seq ?? 0;
    watched.truncatedAtStart(tail.seq < signedSeq);
    if (tail.seq < signedSeq)
      log.error(
        { logEndsAt: tail.seq, signedHead: signedSeq },
        `audit log truncated: it ends at entry ${tail.seq} but the signed head is entry ${signedSeq}`,
      );
    const checkpoints = createCheckpointer({
      dir: checkpointDir(config),
      keys: checkpointKeys,
      clock,
      everyMs: config.AUDIT_CHECKPOINT_EVERY_MS,
      headEveryMs: config.AUDIT_HEAD_EVERY_MS,
      log,
      signedSeq,
    });
    // Entries written before links were keyed are sealed as they are, once.
    if (!tail.keyed) checkpoints.sealLegacy(tail);
    const sql = sqlAuditLog(platform.db, log, { keys, onWritten: (head) => checkpoints.observe(head) });
    platform.onClose(async () => {
      await sql.close();
      await checkpoints.close();
    });
    audit = sql;
    // The Merkle tree over the log (docs/audit-proofs.md), built on the first proof asked for.
    proofs = auditProofs({
      log: sql,
      tree: auditTree({
        read: (from, limit) => readAudit(platform.db, from, limit),
        tail: () => readTail(platform.db),
      }),
      keys: checkpointKeys,
      clock,
    });
    // The public keys of head.jws, the checkpoints and the tree heads: what a verifier needs.
    app.get(AUDIT_KEYS_PATH, async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=60').send(checkpointKeys.jwks()),
    );
    verifyAudit = async () =>
      verifyAuditLog(platform.db, {
        keyOf: (kid) => keys.keyOf(kid),
        checkpoints: await readCheckpoints(checkpointDir(config), checkpointKeys),
      });
  }

  const activity = redis ? redisActivityStore(redis, prefix, log) : memoryActivityStore();
  platform.onClose(() => activity.close());
  const blocks = watched.blocks(
    redis ? redisBlockStore(redis, prefix, SPEC_BLOCK_POLICY) : memoryBlockStore(SPEC_BLOCK_POLICY),
  );
  const buckets = redis ? redisBucketStore(redis, prefix, bucketPolicy) : memoryBucketStore(bucketPolicy);

  const chain: AgentChainParts = {
    policy,
    blocks,
    buckets,
    bucketPolicy,
    idempotency: redis ? redisIdempotencyStore(redis, prefix, times) : memoryIdempotencyStore(times),
    orders,
    audit: feedingActivity(audit, activity),
    // Embedded: the procurement module's ledger, where operators' policies are; else Redis.
    spend: {
      ledger: watched.spend(
        spendLedgerOf(procurement) ?? spendLedgerFor(platform),
        config.SPEND_POLICY_DEFAULT,
      ),
      withoutPolicy: config.SPEND_POLICY_DEFAULT,
      refused: watched.spendRefused,
    },
  };
  const catalog = catalogSlot();
  await registerAgentRoutes(app, {
    clock,
    log,
    identity: {
      trustDomains: config.SPIFFE_TRUST_DOMAINS,
      trustedProxies: config.TRUSTED_PROXIES,
      servedHosts: servedHosts(config),
      tls: Boolean(config.TLS_CERT_FILE && config.TLS_KEY_FILE),
      signatures,
    },
    policy,
    tokens: await tokenVerifierFor(config),
    blocks,
    buckets,
    bucketPolicy,
    idempotency: chain.idempotency,
    orders,
    audit: chain.audit,
    bodyLimit: config.ORDER_BODY_LIMIT_BYTES,
    spend: chain.spend,
    ...(proofs ? { auditProofs: proofs } : {}),
    sessions: checkoutSessionStoreFor(platform.db),
    catalog: { slot: catalog, defaultRegion: config.ACP_DEFAULT_REGION },
  });
  return {
    chain,
    blocks,
    blockPolicy: SPEC_BLOCK_POLICY,
    buckets,
    bucketPolicy,
    activity,
    audit,
    verifyAudit: watched.verify(verifyAudit),
    ...(proofs ? { auditProofs: proofs } : {}),
    catalog,
  };
}
