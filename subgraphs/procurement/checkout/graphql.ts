import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../../lib/auth/context.ts';
import type { Clock } from '../../../lib/clock.ts';
import { migrate } from '../../../lib/db/index.ts';
import type { Platform } from '../../../lib/platform.ts';
import type { PurchaseOrder } from '../domain/purchase-order.ts';
import { textOfCents } from '../spend/policy.ts';
import { checkoutMigrations } from './migrations.ts';
import {
  type CheckoutSession,
  effectiveStatus,
  type OrderAuthorization,
  type SessionStatus,
} from './session.ts';
import { sqlCheckoutSessionStore } from './sql.ts';
import type { CheckoutSessionStore } from './store.ts';

/**
 * Operators' read of the checkout sessions (`Query.checkoutSessions`, orders:read from its
 * @requiresRole): the console's Checkout page. Amounts are the session's cents as exact decimal
 * text with two places ("12.50"), the same text as the lines of the order a session becomes.
 */
export const MAX_SESSIONS = 200;
/** How many stored sessions one answer reads at most while it looks past open ones that are out of time. */
export const MAX_SCAN = 2000;

const OPEN: readonly SessionStatus[] = ['not_ready_for_payment', 'ready_for_payment'];

/** SDL enum value ↔ the session core's status. */
const gqlStatus = (s: SessionStatus) => s.toUpperCase();
const coreStatus = (s: string) => s.toLowerCase() as SessionStatus;

const iso = (ms: number) => new Date(ms).toISOString();

/** A session as the SDL's CheckoutSession, with the status it has now (an open one past its time is expired). */
export function sessionView(s: CheckoutSession, nowMs: number) {
  return {
    id: s.id,
    status: gqlStatus(effectiveStatus(s, nowMs)),
    protocol: s.protocol,
    owner: s.owner,
    agentId: s.agentId,
    keyId: s.keyId,
    currency: s.currency,
    // Priced lines only: an item that could not be priced may have a line of zero amounts marked
    // `unpriced` (its session message says why); it is no price an operator should read.
    lines: s.lines
      .filter((l) => !(l as { unpriced?: true }).unpriced)
      .map((l) => ({
        sku: l.sku,
        name: l.name,
        quantity: l.quantity,
        unitPriceDecimal: textOfCents(l.unitCents),
        discountDecimal: textOfCents(l.discountCents),
        lineTotalDecimal: textOfCents(l.totalCents),
      })),
    discountDecimal: textOfCents(s.totals.discountCents),
    totalDecimal: textOfCents(s.totals.totalCents),
    orderId: s.orderId,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    expiresAt: iso(s.expiresAt),
  };
}

/** An order's AP2 evidence as the SDL's OrderAuthorization. */
const authorizationView = (a: OrderAuthorization) => ({
  type: a.kind,
  checkoutMandate: a.mandate,
  mandateSha256: a.mandateSha256,
  merchantAuthorization: a.merchantAuthorization,
  merchantKid: a.merchantKid,
  platformProfile: a.platformProfile,
  platformKid: a.platformKid,
  verifiedAt: iso(a.verifiedAt),
});

/**
 * The statuses to ask the store for: the stored status of an open session past its expiry is
 * still open (the service marks it when the session is next touched), so EXPIRED also reads the
 * open ones. None: every status.
 */
export function storedStatuses(wanted: readonly SessionStatus[]): SessionStatus[] | undefined {
  if (wanted.length === 0) return undefined;
  return [...new Set(wanted.includes('expired') ? [...wanted, ...OPEN] : wanted)];
}

/** The first `limit` sessions whose status now is one of `wanted` (none: any), in the store's order. */
export function selectSessions(
  rows: readonly CheckoutSession[],
  wanted: readonly SessionStatus[],
  nowMs: number,
  limit: number,
): CheckoutSession[] {
  const ok = (s: CheckoutSession) => wanted.length === 0 || wanted.includes(effectiveStatus(s, nowMs));
  return rows.filter(ok).slice(0, limit);
}

export function checkoutSessionResolvers(
  store: CheckoutSessionStore,
  clock: Clock,
): GraphQLResolverMap<RequestContext> {
  return {
    PurchaseOrder: {
      // The session the order completed, read only for its owner's order (the one it placed).
      authorization: async (o: PurchaseOrder) => {
        const s = o.checkoutSessionId ? await store.get(o.checkoutSessionId) : null;
        const a = s && s.owner === o.spiffeId ? s.authorization : undefined;
        return a ? authorizationView(a) : null;
      },
    },
    Query: {
      checkoutSessions: async (
        _: unknown,
        a: { statuses?: readonly string[] | null; first?: number | null },
      ) => {
        const first = a.first ?? 50;
        if (!Number.isInteger(first) || first < 1 || first > MAX_SESSIONS)
          throw new GraphQLError(`first: from 1 to ${MAX_SESSIONS}`, {
            extensions: { code: 'BAD_USER_INPUT', field: 'first' },
          });
        const wanted = (a.statuses ?? []).map(coreStatus);
        const statuses = storedStatuses(wanted);
        const now = clock.now();
        // A filter drops the stored rows whose status now differs (an open session out of time):
        // read further until the page is full or the store has no more (at most MAX_SCAN rows).
        for (let n = first; ; n = Math.min(n * 4, MAX_SCAN)) {
          const rows = await store.list({ ...(statuses ? { statuses } : {}), limit: n });
          const page = selectSessions(rows, wanted, now, first);
          if (page.length === first || rows.length < n || n >= MAX_SCAN)
            return page.map((s) => sessionView(s, now));
        }
      },
    },
  };
}

/**
 * The resolvers over this platform's checkout store (`platform.db`). The sessions table is the
 * gateway's ACP routes'; its migrations run here too (idempotent), so a procurement process
 * started first reads an empty table instead of failing.
 */
export async function checkoutSessionResolversFor(
  platform: Platform,
): Promise<GraphQLResolverMap<RequestContext>> {
  await migrate(platform.db, checkoutMigrations);
  return checkoutSessionResolvers(sqlCheckoutSessionStore(platform.db), platform.clock);
}
