import { callerVerifierFor } from '../../lib/auth/jwt.ts';
import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';
import { promotionsResolvers } from './graphql.ts';
import { withQuoteTokenField } from './quote-token-field.ts';
import { promotionsRoutes } from './rest.ts';
import { createPromotionService, type PromotionEngine } from './service.ts';
import { promotionsWarmUpRequests } from './warm-up.ts';

/** The promotions subgraph plus `api`: the service other modules call in process. */
export interface PromotionsModule extends SubgraphModule {
  readonly api: PromotionEngine;
}

export async function createPromotionsSubgraph(platform: Platform): Promise<PromotionsModule> {
  const engine = await createPromotionService(platform);
  const schema = buildShieldedSubgraphSchema(
    'promotions',
    await withQuoteTokenField(promotionsResolvers(engine), engine, platform),
  );
  return {
    name: 'promotions',
    schema,
    routes: promotionsRoutes(
      engine,
      await callerVerifierFor(platform.config),
      platform.config.GATEWAY_SHARED_SECRET,
    ),
    api: engine,
    warmUpRequests: async () => promotionsWarmUpRequests(platform.config.GATEWAY_SHARED_SECRET),
    close: () => engine.close(),
  };
}
