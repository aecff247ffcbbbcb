import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';

// FOUNDATION STUB (issue 2): a tiny fixed catalog so the supergraph answers end to end.
// The pricing issue replaces it with the catalog store, cache, modifiers and events.
const catalog = new Map([
  [
    'SKU-ABC-000001',
    { sku: 'SKU-ABC-000001', name: 'Widget', category: 'tools', inventoryLevel: 50, price: 19.99 },
  ],
  [
    'SKU-ABC-000002',
    { sku: 'SKU-ABC-000002', name: 'Gadget', category: 'toys', inventoryLevel: 5, price: 5 },
  ],
]);

export async function createPricingSubgraph(_platform: Platform): Promise<SubgraphModule> {
  const schema = buildShieldedSubgraphSchema('pricing', {
    Query: {
      product: (_: unknown, { sku }: { sku: string }) => catalog.get(sku) ?? null,
      products: (_: unknown, { skus }: { skus: string[] }) => skus.map((s) => catalog.get(s) ?? null),
    },
    Product: {
      __resolveReference: (ref: { sku: string }) => catalog.get(ref.sku) ?? null,
      basePrices: (p: { sku: string; price: number }) => [{ sku: p.sku, currency: 'USD', amount: p.price }],
    },
  });
  return { name: 'pricing', schema };
}
