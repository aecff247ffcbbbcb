import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import type { Clock } from '../../../lib/clock.ts';
import { migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import { textOfCents } from '../spend/policy.ts';
import type { Cart } from './cart.ts';
import { cartMigrations } from './migrations.ts';
import { sqlCartStore } from './sql.ts';
import type { CartStore } from './store.ts';

/**
 * Operators' read of the carts (`Query.carts`, orders:read from its @requiresRole): the
 * console's Checkout page, beside the checkout sessions. Amounts as the sessions' (exact decimal
 * text with two places).
 */
export const MAX_CARTS = 200;

const iso = (ms: number) => new Date(ms).toISOString();

/** A cart as the SDL's Cart. */
export function cartView(c: Cart) {
  return {
    id: c.id,
    protocol: c.protocol,
    owner: c.owner,
    agentId: c.agentId,
    keyId: c.keyId,
    currency: c.currency,
    lines: c.pricing.lines
      .filter((l) => !l.unpriced)
      .map((l) => ({
        sku: l.sku,
        name: l.name,
        quantity: l.quantity,
        unitPriceDecimal: textOfCents(l.unitCents),
        discountDecimal: textOfCents(l.discountCents),
        lineTotalDecimal: textOfCents(l.totalCents),
      })),
    problems: c.pricing.problems.map((p) => p.message),
    discountDecimal: textOfCents(c.pricing.totals.discountCents),
    totalDecimal: textOfCents(c.pricing.totals.totalCents),
    checkoutSessionId: c.checkoutId,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    expiresAt: iso(c.expiresAt),
  };
}

export function cartResolvers(store: CartStore, clock: Clock): GraphQLResolverMap<RequestContext> {
  return {
    Query: {
      carts: async (_: unknown, a: { first?: number | null }) => {
        const first = a.first ?? 50;
        if (!Number.isInteger(first) || first < 1 || first > MAX_CARTS)
          throw new GraphQLError(`first: from 1 to ${MAX_CARTS}`, {
            extensions: { code: 'BAD_USER_INPUT', field: 'first' },
          });
        return (await store.list({ nowMs: clock.now(), limit: first })).map(cartView);
      },
    },
  };
}

/**
 * The resolvers over this platform's cart table (`platform.db`: the gateway's cart routes
 * write it); its migrations run here too (idempotent), so a procurement process started first
 * reads an empty table instead of failing.
 */
export async function cartResolversFor(platform: Platform): Promise<GraphQLResolverMap<RequestContext>> {
  await migrate(platform.db, cartMigrations);
  return cartResolvers(sqlCartStore(platform.db), platform.clock);
}
