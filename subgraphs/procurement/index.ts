import { migrate } from '../../lib/db/index.ts';
import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { createOrderDomain, type OrderDomain } from './domain/order-domain.ts';
import { procurementResolvers } from './graphql.ts';
import { internalOrderRoutes } from './internal-http.ts';
import { createOutboxRelay, type OutboxRelay } from './outbox/relay.ts';
import { memoryOrderStore } from './store/memory.ts';
import { orderMigrations } from './store/migrations.ts';
import { sqlOrderStore, sqlOutbox } from './store/sql.ts';
import type { OrderStore, OutboxStore } from './store/store.ts';

/** The procurement subgraph plus its order domain, which the agent gateway calls. */
export interface ProcurementModule extends SubgraphModule {
  readonly api: OrderDomain;
  /** The outbox relay of this process (tests wait on `idle()`). */
  readonly relay: OutboxRelay;
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
  const domain = createOrderDomain(store, platform.clock, {
    cancelWindowMs: config.ORDER_CANCEL_WINDOW_SECONDS * 1000,
    committed: relay.wake,
  });
  const schema = buildShieldedSubgraphSchema('procurement', procurementResolvers(domain));
  return {
    name: 'procurement',
    schema,
    api: domain,
    relay,
    ...(opts.internalHttp ? { routes: internalOrderRoutes(domain, config) } : {}),
  };
}

/** The order domain of an embedded procurement module, if this process runs one. */
export const orderDomainOf = (m: SubgraphModule | undefined): OrderDomain | undefined =>
  m && 'api' in m ? (m as ProcurementModule).api : undefined;
