import { migrate } from '../../lib/db/index.ts';
import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { createOrderDomain, type OrderDomain } from './domain/order-domain.ts';
import { procurementResolvers } from './graphql.ts';
import { internalOrderRoutes } from './internal-http.ts';
import { memoryOrderStore } from './store/memory.ts';
import { orderMigrations } from './store/migrations.ts';
import { sqlOrderStore } from './store/sql.ts';
import { createWebhooks, type Webhooks } from './webhooks/index.ts';

/** The procurement subgraph plus its order domain, which the agent gateway calls. */
export interface ProcurementModule extends SubgraphModule {
  readonly api: OrderDomain;
  readonly webhooks: Webhooks;
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
  let store = memoryOrderStore();
  if (config.ORDER_STORE === 'sql') {
    await migrate(platform.db, orderMigrations);
    store = sqlOrderStore(platform.db);
  }
  const domain = createOrderDomain(store, platform.clock);
  const webhooks = await createWebhooks(platform);
  const schema = buildShieldedSubgraphSchema('procurement', procurementResolvers(domain, webhooks.admin));
  return {
    name: 'procurement',
    schema,
    api: domain,
    webhooks,
    close: () => webhooks.close(),
    ...(opts.internalHttp ? { routes: internalOrderRoutes(domain, config) } : {}),
  };
}

/** The order domain of an embedded procurement module, if this process runs one. */
export const orderDomainOf = (m: SubgraphModule | undefined): OrderDomain | undefined =>
  m && 'api' in m ? (m as ProcurementModule).api : undefined;
