import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';
import type { BuyerConsent } from './domain/buyer-consent.ts';
import { cursorOf, decodeCursor, encodeCursor } from './domain/cursor.ts';
import type { OrderDomain } from './domain/order-domain.ts';
import type { OrderLine, OrderStatus, PurchaseOrder } from './domain/purchase-order.ts';
import { webhookResolvers } from './webhooks/graphql.ts';
import type { WebhookAdmin } from './webhooks/service.ts';

const MAX_LIMIT = 200;

interface ListArgs {
  agentId?: string | null;
  spiffeId?: string | null;
  sku?: string | null;
  status?: OrderStatus | null;
  placedFrom?: number | null;
  placedBefore?: number | null;
  after?: string | null;
  limit?: number | null;
}

/** A line as PurchaseOrderLine reads it: a /v2 order's one line has no amounts. */
type LineView = Pick<OrderLine, 'sku' | 'quantity'> & Partial<Omit<OrderLine, 'sku' | 'quantity'>>;

/** A checkout order's lines, or a /v2 order's one line (its sku and quantity, no amounts). */
const linesOf = (o: PurchaseOrder): readonly LineView[] => o.lines ?? [{ sku: o.sku, quantity: o.quantity }];

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

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
      purchaseOrders: async (_: unknown, a: ListArgs) => {
        const after = a.after == null ? undefined : decodeCursor(a.after);
        if (a.after != null && !after) throw badInput('after is not a cursor of this listing');
        const page = await domain.list({
          ...(a.agentId != null ? { agentId: a.agentId } : {}),
          ...(a.spiffeId != null ? { spiffeId: a.spiffeId } : {}),
          ...(a.sku != null ? { sku: a.sku } : {}),
          ...(a.status != null ? { status: a.status } : {}),
          ...(a.placedFrom != null ? { placedFrom: a.placedFrom } : {}),
          ...(a.placedBefore != null ? { placedBefore: a.placedBefore } : {}),
          ...(after ? { after } : {}),
          limit: Math.min(MAX_LIMIT, Math.max(1, a.limit ?? 50)),
        });
        return page.orders;
      },
    },
    PurchaseOrder: {
      __resolveReference: (ref: { orderId: string }) => domain.get(ref.orderId),
      product: (o: { sku: string }) => ({ sku: o.sku }),
      // GraphQL's Float is a double. A whole-cent amount up to 5000 has at most 6 significant
      // digits, so its double prints back as the same decimal: exact in the reply's text.
      allocatedBudget: (o: { allocatedBudget: string }) => Number(o.allocatedBudget),
      cursor: (o: PurchaseOrder) => encodeCursor(cursorOf(o)),
      lines: linesOf,
      // Kept as text ("1250.00"): the Decimal scalar prints it as stored.
      totalDecimal: (o: PurchaseOrder) => o.total,
      checkoutSessionId: (o: PurchaseOrder) => o.checkoutSessionId,
      buyerConsent: (o: PurchaseOrder) => o.buyerConsent ?? null,
    },
    BuyerConsent: {
      saleOfData: (c: BuyerConsent) => c.sale_of_data ?? null,
    },
    PurchaseOrderLine: {
      unitPriceDecimal: (l: LineView) => l.unitPrice ?? null,
      discountDecimal: (l: LineView) => l.discount ?? null,
      lineTotalDecimal: (l: LineView) => l.lineTotal ?? null,
    },
  };
}
