import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import type { RequestContext } from '../../lib/auth/context.ts';
import type { OrderDomain } from './domain/order-domain.ts';
import { webhookResolvers } from './webhooks/graphql.ts';
import type { WebhookAdmin } from './webhooks/service.ts';

const MAX_LIMIT = 200;

/** Resolvers of schemas/procurement.graphql; the role rules come from its @requiresRole. */
export function procurementResolvers(
  domain: OrderDomain,
  webhooks: WebhookAdmin,
): GraphQLResolverMap<RequestContext> {
  const hooks = webhookResolvers(webhooks);
  return {
    Mutation: hooks.Mutation,
    Query: {
      ...hooks.Query,
      purchaseOrder: (_: unknown, { orderId }: { orderId: string }) => domain.get(orderId),
      purchaseOrders: (_: unknown, { agentId, limit }: { agentId?: string | null; limit?: number | null }) =>
        domain.list({
          ...(agentId ? { agentId } : {}),
          limit: Math.min(MAX_LIMIT, Math.max(1, limit ?? 50)),
        }),
    },
    PurchaseOrder: {
      __resolveReference: (ref: { orderId: string }) => domain.get(ref.orderId),
      product: (o: { sku: string }) => ({ sku: o.sku }),
      // GraphQL's Float is a double. A whole-cent amount up to 5000 has at most 6 significant
      // digits, so its double prints back as the same decimal: exact in the reply's text.
      allocatedBudget: (o: { allocatedBudget: string }) => Number(o.allocatedBudget),
    },
  };
}
