import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import { freeText } from '../../../lib/text/free-text.ts';
import type { OrderDomain } from '../domain/order-domain.ts';
import type { PurchaseOrder, ShipmentLine } from '../domain/purchase-order.ts';
import { checkEndpointUrl } from '../webhooks/endpoint-url.ts';

const ORDER_ID = /^ord_[0-9a-f]{32}$/;
const MAX_TRACKING = 100;
const MAX_LINES = 50;

const error = (code: string, message: string, extra: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extra } });
const badInput = (field: string, message: string) => error('BAD_USER_INPUT', message, { field });

/** A short operator text (lib/text/free-text.ts); null when optional and empty. */
function textOf(
  field: string,
  raw: string | null | undefined,
  max: number,
  required: boolean,
): string | null {
  // Stored in the order's shipments (jsonb): what PostgreSQL refuses is refused here, not as a database error.
  const t = freeText(raw, { max, required });
  if (!t.ok) throw badInput(field, `${field} ${t.reason}`);
  return t.text;
}

/** A tracking URL is shown to buyers: absolute http(s), no credentials (the webhook URL rules, private hosts allowed). */
function trackingUrlOf(raw: string | null | undefined): string | null {
  const t = textOf('trackingUrl', raw, 2048, false);
  if (t === null) return null;
  const checked = checkEndpointUrl(t, true);
  if (!checked.ok) throw badInput('trackingUrl', `trackingUrl ${checked.reason}`);
  return t;
}

function linesOf(raw: readonly ShipmentLine[] | null | undefined): readonly ShipmentLine[] | undefined {
  if (raw == null) return undefined;
  if (raw.length === 0 || raw.length > MAX_LINES)
    throw badInput('lines', `lines: from 1 to ${MAX_LINES}, or omitted for everything left`);
  return raw.map((l) => ({ line: l.line, quantity: l.quantity }));
}

/**
 * Resolvers of the shipment part of schemas/procurement.graphql: the operator path that records
 * a shipment (role `orders:fulfill`, from its @requiresRole, applied by the gateway and again in
 * the subgraph), and the order's `shipments`.
 */
export function shipmentResolvers(domain: OrderDomain): GraphQLResolverMap<RequestContext> {
  return {
    Mutation: {
      recordOrderShipment: async (
        _: unknown,
        a: {
          orderId: string;
          trackingNumber: string;
          carrier?: string | null;
          trackingUrl?: string | null;
          lines?: readonly ShipmentLine[] | null;
        },
        ctx: RequestContext,
      ): Promise<PurchaseOrder> => {
        if (!ORDER_ID.test(a.orderId))
          throw badInput('orderId', 'orderId is not an order id (ord_ and 32 hex digits)');
        const operator = ctx.caller.subject;
        if (!operator)
          throw error('FORBIDDEN', 'recording a shipment needs a token with a subject (the operator)');
        const lines = linesOf(a.lines);
        const r = await domain.ship(a.orderId, {
          operator,
          trackingNumber: textOf('trackingNumber', a.trackingNumber, MAX_TRACKING, true) as string,
          carrier: textOf('carrier', a.carrier, MAX_TRACKING, false),
          trackingUrl: trackingUrlOf(a.trackingUrl),
          ...(lines ? { lines } : {}),
        });
        switch (r.kind) {
          case 'shipped':
            return r.order;
          case 'not-found':
            throw error('NOT_FOUND', `order ${a.orderId} not found`);
          case 'not-shippable':
            throw error('ORDER_NOT_SHIPPABLE', r.reason, { status: r.order.status });
          case 'invalid':
            throw badInput(r.field, r.reason);
        }
      },
    },
    PurchaseOrder: {
      shipments: (o: PurchaseOrder) => o.shipments ?? [],
    },
  };
}
