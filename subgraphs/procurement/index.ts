import { buildShieldedSubgraphSchema, type SubgraphModule } from '../../lib/graphql/subgraph.ts';
import type { Platform } from '../../lib/platform.ts';

// FOUNDATION STUB (issue 2): the agent purchase gateway issue replaces it with the order domain.
const orders = [
  {
    orderId: 'ord_foundation_1',
    status: 'APPROVED',
    agentId: 'agent-0000001',
    spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent',
    sku: 'SKU-ABC-000001',
    quantity: 2,
    allocatedBudget: 100,
    processedAt: 1767225600.5,
  },
];

export async function createProcurementSubgraph(_platform: Platform): Promise<SubgraphModule> {
  const schema = buildShieldedSubgraphSchema('procurement', {
    Query: {
      purchaseOrders: () => orders,
      purchaseOrder: (_: unknown, { orderId }: { orderId: string }) =>
        orders.find((o) => o.orderId === orderId) ?? null,
    },
    PurchaseOrder: { product: (o: { sku: string }) => ({ sku: o.sku }) },
  });
  return { name: 'procurement', schema };
}
