import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { signApprovalRecord } from '../../lib/ap2/approval-record.ts';
import type { RequestContext } from '../../lib/auth/context.ts';
import { migrate } from '../../lib/db/index.ts';
import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { apiKeyResolvers } from './api-keys/graphql.ts';
import { checkoutApiKeysFor } from './api-keys/index.ts';
import { approvalResolvers } from './approval/graphql.ts';
import { type ExpirySweep, startExpirySweep } from './approval/sweep.ts';
import { cartResolversFor } from './cart/graphql.ts';
import { checkoutSessionResolversFor } from './checkout/graphql.ts';
import { createOrderDomain, type OrderDomain } from './domain/order-domain.ts';
import { procurementResolvers } from './graphql.ts';
import { identityLinkingResolvers } from './identity-linking/graphql.ts';
import { identityLinkingFor } from './identity-linking/service.ts';
import { internalOrderRoutes } from './internal-http.ts';
import { approvalMetrics } from './metrics.ts';
import { createOutboxRelay, type OutboxRelay } from './outbox/relay.ts';
import { shipmentResolvers } from './shipping/graphql.ts';
import { spendResolvers } from './spend/graphql.ts';
import { spendLedgerFor } from './spend/index.ts';
import type { SpendLedger } from './spend/ledger.ts';
import { memoryOrderStore } from './store/memory.ts';
import { orderMigrations } from './store/migrations.ts';
import { sqlOrderStore, sqlOutbox } from './store/sql.ts';
import type { OrderStore, OutboxStore } from './store/store.ts';
import { createWebhooks, type Webhooks } from './webhooks/index.ts';
import { ucpSigningKey } from './webhooks/ucp-signing-key.ts';

/** The procurement subgraph plus its order domain, which the agent gateway calls. */
export interface ProcurementModule extends SubgraphModule {
  readonly api: OrderDomain;
  readonly webhooks: Webhooks;
  /** Spend policies and their ledger; an embedded gateway enforces them from this instance. */
  readonly spend: SpendLedger;
  /** The outbox relay of this process (tests wait on `idle()`). */
  readonly relay: OutboxRelay;
  /** The expiry of pending approvals in this process (tests run a pass with `runOnce()`). */
  readonly approvalSweep: ExpirySweep;
}

export interface ProcurementOptions {
  /**
   * Serve the order domain over HTTP for remote gateways (distributed topology only: in the
   * embedded one the gateway calls it in process and no extra door is opened).
   */
  readonly internalHttp?: boolean;
}

export async function createProcurementSubgraph(
  platform: Platform,
  opts: ProcurementOptions = {},
): Promise<ProcurementModule> {
  const { config } = platform;
  let store: OrderStore;
  let outbox: OutboxStore;
  if (config.ORDER_STORE === 'sql') {
    await migrate(platform.db, orderMigrations);
    store = sqlOrderStore(platform.db);
    outbox = sqlOutbox(platform.db);
  } else {
    const memory = memoryOrderStore();
    store = memory;
    outbox = memory.outbox;
  }
  // Every process that writes orders relays its outbox (and, on Postgres, any replica's rows
  // left behind: the claim skips rows another relay holds).
  const relay = createOutboxRelay({
    outbox,
    publish: (event) => platform.bus.publishEvent(event),
    log: platform.log,
    batchSize: config.OUTBOX_BATCH_SIZE,
    pollMs: config.OUTBOX_POLL_MS,
  });
  platform.onClose(() => relay.stop());
  const spend = spendLedgerFor(platform);
  const approvalsWatched = approvalMetrics(platform.metrics, store, platform.clock, platform.log);
  const domain = createOrderDomain(store, platform.clock, {
    cancelWindowMs: config.ORDER_CANCEL_WINDOW_SECONDS * 1000,
    committed: relay.wake,
    approvalTtlMs: config.ORDER_APPROVAL_TTL_SECONDS * 1000,
    // A rejected or expired order's amount goes back to its spend period (issue 22).
    release: (orderId, now) => spend.release(orderId, now),
    decided: approvalsWatched.decided,
    // Signed by the key ring of the business profile's signing_keys (the one that signs order
    // webhooks and AP2 merchant authorizations): one set of public keys verifies all of it.
    signApproval: async (record) =>
      (await signApprovalRecord(record, await ucpSigningKey(config, platform.clock))).jws,
  });
  const approvalSweep = startExpirySweep({
    domain,
    meanMs: config.ORDER_APPROVAL_SWEEP_MS,
    log: platform.log,
  });
  platform.onClose(() => approvalSweep.stop());
  const webhooks = await createWebhooks(platform, { orders: domain });
  const orders = procurementResolvers(domain, webhooks.admin);
  const policies = spendResolvers(spend, platform.clock, config.SPIFFE_TRUST_DOMAINS);
  const approvals = approvalResolvers(domain, spend, platform.clock);
  // ACP checkout API keys (docs/acp-keys.md); the gateway verifies through the same store.
  const apiKeys = apiKeyResolvers(await checkoutApiKeysFor(platform));
  // Identity linking (docs/identity-linking.md): OAuth clients and the buyers' linked platforms.
  const linking = identityLinkingResolvers(await identityLinkingFor(platform), {
    allowInsecureProfiles: config.UCP_PROFILE_ALLOW_INSECURE,
  });
  // Operators' read of the ACP checkout sessions (the console's Checkout page).
  const sessions = await checkoutSessionResolversFor(platform);
  // Carts beside them (docs/carts.md).
  const carts = await cartResolversFor(platform);
  const schema = buildShieldedSubgraphSchema(
    'procurement',
    mergeResolvers(orders, policies, approvals, apiKeys, linking, sessions, carts, shipmentResolvers(domain)),
  );
  return {
    name: 'procurement',
    schema,
    api: domain,
    webhooks,
    close: () => webhooks.close(),
    spend,
    relay,
    approvalSweep,
    ...(opts.internalHttp ? { routes: internalOrderRoutes(domain, config) } : {}),
  };
}

/** Resolver maps of several parts of the subgraph, merged type by type (Query, Mutation, …). */
function mergeResolvers(...maps: GraphQLResolverMap<RequestContext>[]): GraphQLResolverMap<RequestContext> {
  const out: Record<string, Record<string, unknown>> = {};
  // A scalar or enum object is taken as it is; field maps are merged.
  for (const m of maps)
    for (const [type, fields] of Object.entries(m))
      out[type] =
        Object.getPrototypeOf(fields) === Object.prototype
          ? { ...out[type], ...(fields as object) }
          : (fields as Record<string, unknown>);
  return out as GraphQLResolverMap<RequestContext>;
}

/** The spend ledger of an embedded procurement module, if this process runs one. */
export const spendLedgerOf = (m: SubgraphModule | undefined): SpendLedger | undefined =>
  m && 'spend' in m ? (m as ProcurementModule).spend : undefined;

/** The order domain of an embedded procurement module, if this process runs one. */
export const orderDomainOf = (m: SubgraphModule | undefined): OrderDomain | undefined =>
  m && 'api' in m ? (m as ProcurementModule).api : undefined;
