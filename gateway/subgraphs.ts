import type { SubgraphFactory, SubgraphName } from '../lib/graphql/subgraph.ts';
import { createPricingSubgraph } from '../subgraphs/pricing/index.ts';
import { createProcurementSubgraph } from '../subgraphs/procurement/index.ts';
import { createPromotionsSubgraph } from '../subgraphs/promotions/index.ts';

/** The three subgraphs of the supergraph, by the names used in composition. */
export const subgraphFactories: Record<SubgraphName, SubgraphFactory> = {
  pricing: createPricingSubgraph,
  promotions: createPromotionsSubgraph,
  procurement: createProcurementSubgraph,
};
