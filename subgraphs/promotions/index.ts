import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';

// FOUNDATION STUB (issue 2): the promotions issue replaces it with the rule engine.
export async function createPromotionsSubgraph(_platform: Platform): Promise<SubgraphModule> {
  const schema = buildShieldedSubgraphSchema('promotions', {
    Query: { promotions: () => [] },
    Mutation: {
      upsertPromotion: (_: unknown, { rule }: { rule: Record<string, unknown> }) => ({
        promotionId: String(rule.promotion_id),
        name: String(rule.name),
        priority: Number(rule.priority),
        status: 'ACTIVE',
        rule,
      }),
    },
  });
  return { name: 'promotions', schema };
}
