/**
 * In-memory ports for unit tests of the checkout session service (gateway/agent/checkout/service.ts):
 * a session store kept in a map and a quote that prices every SKU flat.
 */
import { pino } from 'pino';
import type { CartQuoter } from '../../../gateway/agent/checkout/service.ts';
import { createCheckoutService } from '../../../gateway/agent/checkout/service.ts';
import type { CheckoutDeps } from '../../../gateway/agent/checkout/types.ts';
import type { OrderPort } from '../../../gateway/agent/order/order-port.ts';
import type { CheckoutSession } from '../../../subgraphs/procurement/checkout/session.ts';
import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import type { PurchaseOrderResponse, UsdAmount } from '../../../subgraphs/procurement/contract/types.ts';
import type { PlaceOrder } from '../../../subgraphs/procurement/domain/purchase-order.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import { memorySpendLedger } from '../../../subgraphs/procurement/spend/memory.ts';

/** A session store in a map (`rows`, by session id); `replace` takes only the next version. */
export function memorySessionStore(): CheckoutSessionStore & { rows: Map<string, CheckoutSession> } {
  const rows = new Map<string, CheckoutSession>();
  return {
    rows,
    async insert(s) {
      if (rows.has(s.id)) return false;
      rows.set(s.id, s);
      return true;
    },
    get: async (id) => rows.get(id) ?? null,
    async replace(next) {
      if (rows.get(next.id)?.version !== next.version - 1) return false;
      rows.set(next.id, next);
      return true;
    },
    list: async () => [...rows.values()],
    async removeRehearsedBefore(before) {
      const old = [...rows.values()].filter((s) => s.owner.endsWith('/warm-up') && s.updatedAt < before);
      return old.filter((s) => rows.delete(s.id)).length;
    },
    async remove(ids) {
      return ids.filter((id) => rows.delete(id)).length;
    },
  };
}

/**
 * A quote in which every SKU costs 10.00 and no promotion applies; its token's payload is
 * `{ jti: 'q1' }` and it expires 15 minutes after `now`. No stock: the caller adds that.
 */
export function flatQuoter(now: number): CartQuoter {
  return {
    async quote(cart) {
      const lines = cart.lines.map((l) => ({
        sku: l.sku,
        name: l.sku,
        quantity: l.quantity,
        unitPrice: 10,
        lineTotal: 10 * l.quantity,
        discount: 0,
        total: 10 * l.quantity,
      }));
      const total = lines.reduce((n, l) => n + l.total, 0);
      const payload = Buffer.from(JSON.stringify({ jti: 'q1' })).toString('base64url');
      return {
        lines,
        subtotal: total,
        discountTotal: 0,
        total,
        promotions: { status: 'evaluated', applied: [], notApplied: [], coupons: [] },
        quoteToken: `h.${payload}.s`,
        expiresAt: new Date(now + 15 * 60_000).toISOString(),
      };
    },
  };
}

/**
 * An order domain that approves every order, keeping each in `placed` by its id; reads, lists and
 * cancels find nothing. `nowMs` is the answer's processing time.
 */
export function approvingOrders(placed: Map<string, PlaceOrder>, nowMs: () => number): OrderPort {
  return {
    async place(cmd: PlaceOrder): Promise<PurchaseOrderResponse> {
      placed.set(cmd.orderId as string, cmd);
      return {
        status: 'APPROVED',
        order_id: cmd.orderId as string,
        allocated_budget: cmd.request.max_budget_usd as UsdAmount,
        processed_at: nowMs() / 1000,
      };
    },
    get: async () => null,
    list: async () => ({ orders: [], nextCursor: null }),
    cancel: async () => ({ kind: 'not-found' as const }),
  };
}

/**
 * The checkout service as these tests run it: every spend allowed without a policy (in `ledger`,
 * a fresh one unless given), sessions living an hour, no log; `now` its clock; the rest as given.
 */
export function checkoutServiceOf(
  o: Pick<CheckoutDeps, 'store' | 'quoter' | 'orders'> &
    Partial<Pick<CheckoutDeps, 'redemptions' | 'completionHoldMs'>> & {
      now: () => number;
      ledger?: SpendLedger;
    },
) {
  const { now, ledger, ...deps } = o;
  return createCheckoutService({
    ...deps,
    spend: { ledger: ledger ?? memorySpendLedger(), withoutPolicy: 'allow' },
    clock: { now },
    log: pino({ level: 'silent' }),
    sessionTtlMs: 3_600_000,
  });
}
