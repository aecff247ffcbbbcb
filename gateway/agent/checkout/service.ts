import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { Problem } from '../../../lib/problem.ts';
import type { CartInput } from '../../../lib/quote-token/index.ts';
import {
  pricedSession,
  type QuotedCart,
  stockProblems,
  type UnquotedItem,
} from '../../../subgraphs/procurement/checkout/pricing.ts';
import {
  type CheckoutSession,
  COMPLETION_PROBLEMS,
  completable,
  completionHeld,
  createSession,
  effectiveStatus,
  isOpen,
  type NewSession,
  newSessionId,
  orderIdOfSession,
  orderPlaced,
  promotionIdsOf,
  type SessionChange,
  type SessionItem,
  type SessionPricing,
  updateSession,
  withProblem,
  withStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { CheckoutSessionStore } from '../../../subgraphs/procurement/checkout/store.ts';
import {
  checkoutRequest,
  InvalidPlaceOrder,
  OrderIdConflict,
  type OrderLine,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import { candidateSubjects, textOfCents } from '../../../subgraphs/procurement/spend/policy.ts';
import { decideApproval } from '../approval/approval.ts';
import { DomainUnavailable, type OrderPort } from '../order/order-port.ts';
import type { RedemptionsPort } from './redemptions.ts';

/**
 * The checkout session service: the one session core both agent-commerce protocols (ACP now,
 * UCP next) stand on. It prices through the cart quote (the same flow as GET /cart/quote, so a
 * session's total is the quote's), keeps sessions in the SQL store, and completes one as a
 * purchase order through the same spend policy, approval and order domain as POST /v2/orders.
 * Protocol edges (gateway/agent/acp/) only translate requests and render sessions.
 */

/** The quote, as the edge's quote service gives it (gateway/edge/quote/service.ts). */
export interface CartQuoter {
  quote(cart: CartInput): Promise<{
    lines: QuotedCart['lines'];
    subtotal: number;
    discountTotal: number;
    total: number;
    promotions: QuotedCart['promotions'];
    quoteToken: string;
    expiresAt: string;
    /** Units in stock of each line's product when it was priced; absent: stock is not checked. */
    inventoryLevels?: readonly number[];
  }>;
  /**
   * Units in stock of each SKU now (undefined for an unknown one), for the completion's re-check;
   * absent: the completion trusts the stock its quote saw.
   */
  inventoryLevels?(skus: readonly string[], currency: string): Promise<(number | undefined)[]>;
  /**
   * The SKU each item id names: a SKU names itself, a merchant's own variant id (its feed's)
   * the SKU the catalog gave it; undefined when the catalog has neither. Absent: SKUs only.
   */
  resolveItems?(ids: readonly string[]): Promise<(string | undefined)[]>;
}

export interface CheckoutDeps {
  readonly store: CheckoutSessionStore;
  readonly quoter: CartQuoter;
  readonly orders: OrderPort;
  readonly spend: {
    readonly ledger: SpendLedger;
    readonly withoutPolicy: 'allow' | 'deny';
    /** Counted when a line's SKU is refused here, before the ledger (which counts its own refusals). */
    readonly refused?: (reason: 'sku-not-allowed') => void;
  };
  /** Where a completion records the promotions it used (absent: none are recorded). */
  readonly redemptions?: RedemptionsPort;
  readonly clock: Clock;
  readonly log: Logger;
  /** How long an open session lives (ACP_SESSION_TTL_SECONDS). */
  readonly sessionTtlMs: number;
  /**
   * How long a completion holds its session (IDEMPOTENCY_IN_FLIGHT_MS: it outlasts any call to
   * the order domain); after it another completion resumes it, or a read settles it.
   */
  readonly completionHoldMs?: number;
}

/** The catalog, the store or the order domain cannot answer now: 503, nothing changed. */
export class CheckoutUnavailable extends Error {
  override name = 'CheckoutUnavailable';
}

export type Outcome =
  /** `replayed`: a completion's same request again, answered by the session it completed. */
  | { readonly kind: 'ok'; readonly session: CheckoutSession; readonly replayed?: true }
  | { readonly kind: 'not-found' }
  /** The session's status does not allow this (completed, canceled, expired, pending approval): 405. */
  | { readonly kind: 'not-allowed'; readonly session: CheckoutSession }
  /** Completion of a session with blocking messages: 400 naming them. */
  | { readonly kind: 'not-ready'; readonly session: CheckoutSession }
  /** Another change of the same session is under way (a completion placing its order): 409. */
  | { readonly kind: 'busy'; readonly session: CheckoutSession };

/** A new session as the protocol edge asks for it: the core's NewSession, its id and lifetime ours. */
export interface CreateCommand extends Omit<NewSession, 'id' | 'owner' | 'ttlMs'> {
  readonly owner: SpiffeId;
  /**
   * The session's id when the caller derives it from its request (ACP: from the Idempotency-Key
   * and the body, as the `/v2` order's id is from its key), so that the same request after a
   * crash meets the session it created instead of making a second one. A new random id else.
   */
  readonly id?: string;
  /**
   * With `id`: how long a session found under it counts as this request's twin (the
   * idempotency store's reply lifetime). An older one was another request under a key used
   * again after its record expired: this one gets a new random id.
   */
  readonly replayWithinMs?: number;
}

/** A create's outcome: the new session, or (same derived id, same owner) the one made before. */
export interface Created {
  readonly session: CheckoutSession;
  readonly existing: boolean;
}

export interface CompleteCommand {
  readonly purchaseOrderNumber: string;
  readonly traceId: string;
  readonly buyer?: Record<string, unknown> | null;
  /** The request's idempotency record (CheckoutSession.completedBy); absent: none is kept. */
  readonly record?: string;
}

/** The catalog's SKUs; any other item id is unknown without asking the catalog. */
export const SKU = /^SKU-[A-Z]{3}-\d{6}$/;
/** A code as the cart quote takes one (schemas/openapi/edge.yaml). */
const COUPON = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** A customer id as the cart quote takes one. */
const CUSTOMER = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
/** Quote attempts at most: unknown SKUs are found first, then SKUs without a price. */
const QUOTE_ROUNDS = 3;
/** How often a change is recomputed when another one of the same session landed first. */
const CAS_ROUNDS = 3;
/** `completedBy` of a session mended at start: the request that completed it is not known. */
const RECOVERED = 'recovered-at-start';
/** Open sessions looked at by recoverCompletions (newest first): a day of sessions at a high rate. */
const RECOVER_AT_MOST = 100_000;

/** The token is ours and was just signed: its payload's jti is the quote's id (not verified again). */
const quoteIdOf = (token: string): string => decodeJwt(token).jti ?? '';

export function createCheckoutService(d: CheckoutDeps) {
  const holdMs = d.completionHoldMs ?? 30_000;
  /** Prices the items through the cart quote; the ones it cannot take become blocking problems. */
  async function price(
    items: readonly SessionItem[],
    codes: readonly string[],
    currency: string,
    region: string,
    agentId: string,
  ): Promise<SessionPricing> {
    const unquoted: UnquotedItem[] = [];
    let indexes: number[] = [];
    // An item named by the merchant's own variant id is priced as the SKU it has in the catalog.
    const foreign = items.filter((it) => !SKU.test(it.sku)).map((it) => it.sku);
    const resolved = new Map<string, string | undefined>();
    if (foreign.length > 0 && d.quoter.resolveItems) {
      const skus = await d.quoter.resolveItems(foreign).catch((err: unknown) => {
        throw new CheckoutUnavailable(`the catalog cannot name the items now: ${(err as Error).message}`);
      });
      foreign.forEach((id, i) => {
        resolved.set(id, skus[i]);
      });
    }
    const skuOf = (it: SessionItem) => (SKU.test(it.sku) ? it.sku : resolved.get(it.sku));
    items.forEach((it, i) => {
      if (skuOf(it) !== undefined) indexes.push(i);
      else unquoted.push({ item: i, kind: 'unknown_sku', message: `${it.sku} is not in the catalog` });
    });
    for (let round = 0; round < QUOTE_ROUNDS && indexes.length > 0; round++) {
      try {
        const q = await d.quoter.quote({
          lines: indexes.map((i) => {
            const it = items[i] as SessionItem;
            return { sku: skuOf(it) as string, quantity: it.quantity };
          }),
          currency,
          region,
          // Promotions count per-customer caps by the agent the order will carry.
          ...(CUSTOMER.test(agentId) ? { customerId: agentId } : {}),
          // A code the cart quote could not even take is simply unknown (rejectedCodes says so).
          coupons: codes.filter((c) => COUPON.test(c.trim())),
        });
        const quoted: QuotedCart = {
          lines: q.lines,
          subtotal: q.subtotal,
          discountTotal: q.discountTotal,
          total: q.total,
          promotions: q.promotions,
          quote: { id: quoteIdOf(q.quoteToken), expiresAt: q.expiresAt, token: q.quoteToken },
          ...(q.inventoryLevels ? { inventoryLevels: q.inventoryLevels } : {}),
        };
        return pricedSession(items, codes, indexes, quoted, unquoted);
      } catch (err) {
        if (!(err instanceof Problem)) throw err;
        if (err.status !== 422) throw new CheckoutUnavailable(err.message);
        // The quote names the lines it cannot take (/line/<j>); the others are quoted again.
        const refused = new Map<number, string>();
        for (const e of (err.body.errors ?? []) as { pointer: string; message: string }[]) {
          const j = Number(/^\/line\/(\d+)$/.exec(e.pointer)?.[1]);
          if (Number.isInteger(j) && indexes[j] !== undefined) refused.set(indexes[j] as number, e.message);
        }
        if (refused.size === 0) throw new CheckoutUnavailable(err.message);
        for (const [item, message] of refused)
          unquoted.push({
            item,
            kind: /not in the catalog/.test(message) ? 'unknown_sku' : 'unpriced',
            message,
          });
        indexes = indexes.filter((i) => !refused.has(i));
      }
    }
    unquoted.sort((a, b) => a.item - b.item);
    return pricedSession(items, codes, [], null, unquoted);
  }

  /**
   * The session as it stands now: an open one past its time is expired, and one waiting for
   * its order's approval follows the order's fate (approved → completed, else canceled). Both
   * are written back, so every replica and every protocol read the same.
   */
  async function current(s: CheckoutSession): Promise<CheckoutSession> {
    const now = d.clock.now();
    if (effectiveStatus(s, now) === 'expired' && s.status !== 'expired')
      return persist(withStatus(s, 'expired', now));
    if (s.status === 'complete_in_progress' && !completionHeld(s, now)) return settle(s);
    const follows =
      s.status === 'pending_approval' ||
      (s.status === 'completed' && !s.problems.some((p) => p.kind === 'order_cancelled'));
    if (!follows || !s.orderId) return s;
    let found: Awaited<ReturnType<OrderPort['get']>>;
    try {
      found = await d.orders.get(s.orderId);
    } catch (err) {
      d.log.warn({ err, sessionId: s.id }, 'order of a checkout session unreadable; shown as it was');
      return s;
    }
    const status = found?.response.status;
    if (!status || status === 'PENDING_APPROVAL') return s;
    if (status === 'APPROVED') return s.status === 'completed' ? s : persist(withStatus(s, 'completed', now));
    const reason = found?.response.decision_reason;
    const kind =
      status === 'EXPIRED'
        ? 'approval_expired'
        : status === 'REJECTED'
          ? 'approval_rejected'
          : 'order_cancelled';
    const said =
      status === 'REJECTED'
        ? `an operator rejected the order${reason ? `: ${reason}` : ''}`
        : status === 'EXPIRED'
          ? 'no operator decided the order in time; its approval request expired'
          : 'the order was cancelled';
    // A completed session stays completed (it was bought); its order shows the cancellation.
    const to = s.status === 'completed' ? 'completed' : 'canceled';
    return persist(
      withStatus(s, to, now, { problems: withProblem(s, { kind, message: said, blocking: false }) }),
    );
  }

  /**
   * The status a session takes from the order its completion placed: pending approval for an
   * order an operator has not approved (waiting, rejected or expired: current() then follows
   * the decision to canceled), completed for an approved one (and one cancelled after, which
   * current() marks on the completed session).
   */
  const statusOfOrder = (status: string | undefined) =>
    status === 'PENDING_APPROVAL' || status === 'REJECTED' || status === 'EXPIRED'
      ? ('pending_approval' as const)
      : ('completed' as const);

  /**
   * A completion that stopped half-way (its hold ran out: the process died, or the order domain
   * did not answer) is settled by what the order domain has: its order placed → the session
   * follows it; none → the completion is undone (reservation and redemptions given back), and
   * the session can be completed again.
   */
  async function settle(s: CheckoutSession): Promise<CheckoutSession> {
    const orderId = s.orderId ?? orderIdOfSession(s.id);
    let found: Awaited<ReturnType<OrderPort['get']>>;
    try {
      found = await d.orders.get(orderId);
    } catch {
      return s; // Unknown still: the next read or completion tries again.
    }
    const now = d.clock.now();
    if (found)
      return current(await persist(withStatus(s, statusOfOrder(found.response.status), now, { orderId })));
    return abandon(s, 'the order could not be placed; complete the session again');
  }

  /**
   * Undoes a completion that placed no order: the session goes back to not ready (with a
   * message; a new completion may proceed), and only if that write wins (no other completion
   * took the session over) are the reservation and the redemptions given back.
   */
  /** Gives back what a completion redeemed under `orderId`, when the session's discounts had any. */
  async function releaseRedemptions(s: CheckoutSession, orderId: string): Promise<void> {
    if (d.redemptions && promotionIdsOf(s).length > 0)
      await d.redemptions.release({ orderId, customerId: s.agentId });
  }

  async function abandon(s: CheckoutSession, message: string): Promise<CheckoutSession> {
    const orderId = s.orderId ?? orderIdOfSession(s.id);
    const back = withStatus(s, 'not_ready_for_payment', d.clock.now(), {
      orderId: null,
      problems: withProblem(s, { kind: 'order_failed', message, blocking: true }),
    });
    if (!(await d.store.replace(back))) return (await d.store.get(s.id)) ?? s;
    // Only what is still this completion's: another completion of the session may have started
    // since the write above and replayed the reservation under the same order id.
    await d.spend.ledger.release(orderId, d.clock.now(), s.completionHolder).catch(() => {});
    await releaseRedemptions(s, orderId).catch(() => {});
    return back;
  }

  /**
   * Before a record of another content under the session's order id (an undone completion's,
   * whose release did not land) is given back: no order may stand under that id, else the
   * record is that order's. 503 when one does, or when the order domain cannot say.
   */
  async function noOrderUnder(orderId: string): Promise<void> {
    if (await d.orders.get(orderId).catch(() => 'unknown'))
      throw new CheckoutUnavailable('the session has an order already, or it cannot be read');
  }

  /** Writes a change; when another landed first, the stored session is what stands. */
  async function persist(next: CheckoutSession): Promise<CheckoutSession> {
    if (await d.store.replace(next)) return next;
    return (await d.store.get(next.id)) ?? next;
  }

  async function load(id: string, owner: SpiffeId): Promise<CheckoutSession | null> {
    const s = await d.store.get(id);
    return s && s.owner === owner.id ? current(s) : null;
  }

  async function create(c: CreateCommand): Promise<Created> {
    const pricing = await price(c.items, c.codes, c.currency, c.region, c.agentId);
    const n: NewSession = {
      id: c.id ?? newSessionId(),
      protocol: c.protocol,
      owner: c.owner.id,
      agentId: c.agentId,
      keyId: c.keyId,
      ...(c.channel ? { channel: c.channel } : {}),
      currency: c.currency,
      region: c.region,
      items: c.items,
      codes: c.codes,
      extensions: c.extensions,
      buyer: c.buyer,
      fulfillment: c.fulfillment,
      ttlMs: d.sessionTtlMs,
    };
    const s = createSession(n, pricing, d.clock.now());
    if (await d.store.insert(s)) return { session: s, existing: false };
    // Taken: by the same request's twin (its session stands), by a request that used the key
    // before its record expired (this one is new), or, for a random id, a collision that
    // cannot happen by chance.
    const twin = c.id ? await load(c.id, c.owner) : null;
    if (twin && d.clock.now() - twin.createdAt < (c.replayWithinMs ?? Number.POSITIVE_INFINITY))
      return { session: twin, existing: true };
    if (twin) return create({ ...c, id: undefined });
    throw new Error(`checkout session id ${s.id} collided`);
  }

  async function update(id: string, owner: SpiffeId, change: SessionChange): Promise<Outcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const s = await load(id, owner);
      if (!s) return { kind: 'not-found' };
      if (s.status === 'complete_in_progress') return { kind: 'busy', session: s };
      if (!isOpen(s)) return { kind: 'not-allowed', session: s };
      const items = change.items ?? s.items;
      const codes = change.codes ?? s.codes;
      const pricing = await price(items, codes, s.currency, change.region ?? s.region, s.agentId);
      const next = updateSession(s, change, pricing, d.clock.now());
      if (await d.store.replace(next)) return { kind: 'ok', session: next };
    }
    throw new CheckoutUnavailable('the session kept changing while it was updated');
  }

  async function cancel(id: string, owner: SpiffeId): Promise<Outcome> {
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const s = await load(id, owner);
      if (!s) return { kind: 'not-found' };
      if (s.status === 'complete_in_progress') return { kind: 'busy', session: s };
      if (s.status === 'pending_approval' && s.orderId) {
        // The agent withdraws its order while it waits: the order domain cancels it (the spend
        // reservation goes back with it), and the session follows.
        const r = await d.orders.cancel(s.orderId, owner.id).catch((err: unknown) => {
          throw new CheckoutUnavailable(err instanceof Error ? err.message : 'order domain unavailable');
        });
        if (r.kind === 'not-cancellable') return { kind: 'not-allowed', session: await current(s) };
      } else if (!isOpen(s)) return { kind: 'not-allowed', session: s };
      const next = withStatus(s, 'canceled', d.clock.now());
      if (await d.store.replace(next)) return { kind: 'ok', session: next };
    }
    throw new CheckoutUnavailable('the session kept changing while it was canceled');
  }

  /**
   * Completion as a purchase order: the session is marked `complete_in_progress` (updates now
   * wait), re-priced if its quote ran out (a changed total is refused, not charged), its total is
   * reserved under the spend policy in one atomic ledger step, and the order is placed with the
   * session's lines. Above the policy's approvalAbove the order waits for an operator and the
   * session is `pending_approval`. Every step is keyed by the session's order id, so a retry (or
   * a resumed completion after a crash) never reserves or orders twice.
   */
  async function complete(id: string, owner: SpiffeId, c: CompleteCommand): Promise<Outcome> {
    let s = await load(id, owner);
    if (!s) return { kind: 'not-found' };
    const now = d.clock.now();
    // Mended at start after a crash lost its write (recoverCompletions): the completion's request
    // is unknown, and the first completion request now is taken as it (the agent's retry of the
    // request whose answer it never got): its purchase-order number and buyer are kept, and it
    // is answered as a replay. One after it is another request (405).
    if (c.record && s.completedBy === RECOVERED && orderPlaced(s)) {
      const adopted: CheckoutSession = {
        ...withStatus(s, s.status, now, { purchaseOrderNumber: c.purchaseOrderNumber }),
        ...(c.buyer !== undefined ? { buyer: c.buyer } : {}),
        completedBy: c.record,
      };
      if (await d.store.replace(adopted)) return { kind: 'ok', session: adopted, replayed: true };
      const again = await load(id, owner);
      return again ? { kind: 'busy', session: again } : { kind: 'not-found' };
    }
    // The same request again, whose answer was lost with its stored reply: what it completed.
    if (c.record && s.completedBy === c.record && orderPlaced(s))
      return { kind: 'ok', session: s, replayed: true };
    // Another completion holds it: this one waits (its own order id would be the same, but the
    // holder may give back what it reserved while this one places the order).
    if (completionHeld(s, now)) return { kind: 'busy', session: s };
    if (!completable(s)) return { kind: isOpen(s) ? 'not-ready' : 'not-allowed', session: s };
    if (s.status !== 'complete_in_progress') {
      // Re-price when the quote's 15 minutes are over: its prices are no longer promised.
      if (!s.quote || Date.parse(s.quote.expiresAt) <= now) {
        const pricing = await price(s.items, s.codes, s.currency, s.region, s.agentId);
        const repriced = updateSession(s, {}, pricing, now);
        if (repriced.status !== 'ready_for_payment' || repriced.totals.totalCents !== s.totals.totalCents) {
          const shown =
            repriced.totals.totalCents === s.totals.totalCents
              ? repriced
              : {
                  ...repriced,
                  status: 'not_ready_for_payment' as const,
                  problems: withProblem(repriced, {
                    kind: 'price_changed',
                    message: `the total changed from ${textOfCents(s.totals.totalCents)} to ${textOfCents(repriced.totals.totalCents)} ${s.currency}; review it and complete again`,
                    blocking: true,
                  }),
                };
          // A business outcome of the completion: the session, with the message saying why.
          return { kind: 'ok', session: await persist(shown) };
        }
        s = repriced;
      } else {
        // Stock is re-checked (not reserved: docs/acp.md, "Stock"): an order is never placed
        // for a line the catalog no longer has enough of.
        const short = await shortOfStock(s);
        if (short.length > 0)
          return {
            kind: 'ok',
            session: await persist(
              withStatus(s, 'not_ready_for_payment', now, { problems: [...s.problems, ...short] }),
            ),
          };
      }
    }
    // Take the session (a stopped completion's is taken over: same order id, so it resumes).
    const buyer = c.buyer !== undefined ? c.buyer : s.buyer;
    const started: CheckoutSession = {
      ...withStatus(s, 'complete_in_progress', now, {
        orderId: s.orderId ?? orderIdOfSession(s.id),
        purchaseOrderNumber:
          s.status === 'complete_in_progress' ? s.purchaseOrderNumber : c.purchaseOrderNumber,
        problems: s.problems.filter((p) => !COMPLETION_PROBLEMS.has(p.kind)),
        completingUntil: now + holdMs,
        completionHolder: randomUUID(),
      }),
      buyer,
      ...(c.record ? { completedBy: c.record } : {}),
    };
    // Embedded (one process writes the store) the mark is held in memory, not written: it is a
    // lock no other process needs to see (docs/acp.md, "One process, one writer").
    const took = d.store.hold ? await d.store.hold(started) : await d.store.replace(started);
    if (!took) {
      const again = await load(id, owner);
      return again ? { kind: 'busy', session: again } : { kind: 'not-found' };
    }
    return place(started, owner, c.traceId);
  }

  /** The session's lines short of stock now (the catalog's units in stock); 503 when it cannot say. */
  async function shortOfStock(s: CheckoutSession) {
    if (!d.quoter.inventoryLevels) return [];
    const levels = await d.quoter
      .inventoryLevels(
        s.lines.map((l) => l.sku),
        s.currency,
      )
      .catch((err: unknown) => {
        throw new CheckoutUnavailable(err instanceof Error ? err.message : 'catalog unavailable');
      });
    return stockProblems(s.lines, levels);
  }

  /** Spend, approval and the order, for a session marked complete_in_progress. */
  async function place(s: CheckoutSession, owner: SpiffeId, traceId: string): Promise<Outcome> {
    const orderId = s.orderId ?? orderIdOfSession(s.id);
    const first = s.lines[0];
    if (!first) return { kind: 'not-ready', session: s };
    const candidates = candidateSubjects(owner);
    const lines: OrderLine[] = s.lines.map((l) => ({
      sku: l.sku,
      quantity: l.quantity,
      unitPrice: textOfCents(l.unitCents),
      discount: textOfCents(l.discountCents),
      lineTotal: textOfCents(l.totalCents),
    }));
    const total = textOfCents(s.totals.totalCents);
    const request = checkoutRequest(s.agentId, lines, total);
    const back = (kind: 'spend_refused', message: string) =>
      persist(
        withStatus(s, 'not_ready_for_payment', d.clock.now(), {
          orderId: null,
          problems: withProblem(s, { kind, message, blocking: true }),
        }),
      ).then((session) => ({ kind: 'ok' as const, session }));

    let status: Awaited<ReturnType<SpendLedger['status']>>;
    try {
      status = await d.spend.ledger.status(candidates, d.clock.now());
      const refusedSku = status?.policy.skuPrefixes?.length
        ? s.lines.find((l) => !status?.policy.skuPrefixes?.some((p) => l.sku.startsWith(p)))
        : undefined;
      if (refusedSku) {
        d.spend.refused?.('sku-not-allowed');
        return back('spend_refused', `the spend policy does not allow ${refusedSku.sku}`);
      }
      const reserve = () =>
        d.spend.ledger.reserve({
          orderId,
          candidates,
          sku: first.sku,
          amountCents: s.totals.totalCents,
          now: d.clock.now(),
          ...(s.completionHolder ? { holder: s.completionHolder } : {}),
        });
      let r = await reserve();
      if (r.kind === 'mismatch') {
        // The session's order id holds another total: an earlier completion that was undone
        // (abandon) whose release did not land, and the cart changed since. That charge is given
        // back and this total judged afresh.
        await noOrderUnder(orderId);
        await d.spend.ledger.release(orderId, d.clock.now());
        r = await reserve();
        if (r.kind === 'mismatch') throw new CheckoutUnavailable('the spend reservation is held');
      }
      if (r.kind === 'no-policy' && d.spend.withoutPolicy === 'deny')
        return back('spend_refused', 'no spend policy covers this agent; an operator must set one');
      if (r.kind === 'refused') {
        const left = textOfCents(Math.max(0, r.status.policy.budgetCents - r.status.spentCents));
        const why = {
          expired: 'the spend policy has expired',
          'sku-not-allowed': `the spend policy does not allow ${first.sku}`,
          'per-order': `the total is above the spend policy's maximum per order`,
          budget: `the total is above what is left of the budget (${left} USD)`,
        }[r.reason];
        return back('spend_refused', why);
      }
      if (r.kind === 'reserved') status = r.status;
    } catch (err) {
      if (err instanceof CheckoutUnavailable) throw err;
      throw new CheckoutUnavailable(err instanceof Error ? err.message : 'spend ledger unavailable');
    }

    const promotionIds = promotionIdsOf(s);
    const customer = { orderId, customerId: s.agentId };
    if (d.redemptions && promotionIds.length > 0) {
      const port = d.redemptions;
      const redeem = () => port.redeem({ ...customer, promotionIds });
      // ALREADY_RECORDED answers the set recorded first under the order id, and counts nothing.
      const wanted = JSON.stringify([...promotionIds].sort());
      const another = (r: Awaited<ReturnType<RedemptionsPort['redeem']>>) =>
        r.status === 'ALREADY_RECORDED' && JSON.stringify([...r.promotionIds].sort()) !== wanted;
      let redeemed: Awaited<ReturnType<RedemptionsPort['redeem']>>;
      try {
        redeemed = await redeem();
        if (another(redeemed)) {
          // The session's order id holds the redemptions of another set: an earlier completion
          // that was undone (abandon) whose release did not land, and the discounts changed
          // since. Taken as a replay, this set would never be counted against its caps: that
          // record is given back and this set redeemed afresh.
          await noOrderUnder(orderId);
          await port.release(customer);
          redeemed = await redeem();
          if (another(redeemed)) throw new Error('the redemptions of another set are held');
        }
      } catch (err) {
        if (err instanceof CheckoutUnavailable) throw err;
        await abandon(s, 'promotions could not record the discounts; complete the session again');
        throw new CheckoutUnavailable(err instanceof Error ? err.message : 'promotions unavailable');
      }
      if (redeemed.status === 'LIMIT_REACHED') {
        // A promotion's cap ran out since the quote: nothing was consumed or ordered. The
        // session is priced again without it, and the agent sees the new total first.
        await d.spend.ledger.release(orderId, d.clock.now()).catch(() => {});
        const pricing = await price(s.items, s.codes, s.currency, s.region, s.agentId);
        const names = s.discounts
          .filter((x) => redeemed.limitReached.includes(x.promotionId))
          .map((x) => x.name);
        const repriced = updateSession({ ...s, orderId: null }, {}, pricing, d.clock.now());
        const shown: CheckoutSession = {
          ...repriced,
          status: 'not_ready_for_payment',
          problems: withProblem(repriced, {
            kind: 'price_changed',
            message: `${names.join(', ') || 'a promotion'} reached its redemption limit; the total is now ${textOfCents(repriced.totals.totalCents)} ${s.currency}: review it and complete again`,
            blocking: true,
          }),
        };
        return { kind: 'ok', session: await persist(shown) };
      }
    }

    const approval = decideApproval(status ?? undefined, request);
    try {
      const placed = await d.orders.place({
        request,
        spiffeId: owner.id,
        traceId,
        orderId,
        ...(approval ? { approvalsRequired: approval.required } : {}),
        lines,
        total,
        checkoutSessionId: s.id,
      });
      const next = withStatus(
        s,
        placed.status === 'PENDING_APPROVAL' ? 'pending_approval' : 'completed',
        d.clock.now(),
        {
          orderId: placed.order_id,
        },
      );
      // Embedded, the completed session is what every read gets at once and is written behind
      // the answer; a crash before it lands is mended at start (recoverCompletions).
      const later = d.store.replaceBehind?.(next);
      if (later) {
        later.then(
          (ok) => ok || d.log.error({ sessionId: s.id, traceId }, 'completed checkout session not written'),
          (err: unknown) =>
            d.log.error({ err, sessionId: s.id, traceId }, 'completed checkout session not written'),
        );
        return { kind: 'ok', session: next };
      }
      return { kind: 'ok', session: await persist(next) };
    } catch (err) {
      d.log.error({ err, traceId, sessionId: s.id }, 'checkout order not placed');
      // Certainly not stored (a refused or rolled-back write, or a command the domain refused):
      // undo the completion. Unknown (a timeout after sending): the session keeps its hold; a
      // retry after it resumes with the same order id, or a read settles it.
      const notStored =
        (err instanceof DomainUnavailable && err.notStored) ||
        err instanceof OrderIdConflict ||
        err instanceof InvalidPlaceOrder;
      if (notStored) await abandon(s, 'the order could not be placed; complete the session again');
      throw new CheckoutUnavailable('the order could not be placed now');
    }
  }

  /**
   * Where the store holds completion marks in memory (embedded), a crash between a completion's
   * order and its session's write behind leaves the row as it was before the completion while
   * the order stands. Run at start after a stop that was not clean (the caller knows), before
   * any request: each session a completion could have started from follows its order
   * (statusOfOrder, then current()); the purchase-order number and a buyer given with that
   * completion were only in the lost write, so the session keeps the ones it had until the
   * completion's request comes again (complete(): RECOVERED) (docs/acp.md, "One process, one
   * writer"). One without an order gives back the promotion redemptions a
   * completion may have recorded under its order id before the crash (as abandon() does). A
   * session that cannot be read or written now is left for the next start, and logged.
   * Returns how many sessions followed their order.
   */
  async function recoverCompletions(): Promise<number> {
    if (!d.store.hold) return 0;
    const open = await d.store.list({
      statuses: ['ready_for_payment', 'not_ready_for_payment'],
      limit: RECOVER_AT_MOST,
    });
    let mended = 0;
    for (const s of open) {
      const orderId = orderIdOfSession(s.id);
      try {
        const found = await d.orders.get(orderId);
        if (found) {
          const to = statusOfOrder(found.response.status);
          const mendedSession = { ...withStatus(s, to, d.clock.now(), { orderId }), completedBy: RECOVERED };
          if (await d.store.replace(mendedSession)) mended++;
          continue;
        }
        await releaseRedemptions(s, orderId);
      } catch (err) {
        d.log.warn(
          { err, sessionId: s.id },
          'checkout session not recovered at start; the next start tries again',
        );
      }
    }
    if (mended > 0)
      d.log.warn({ mended }, 'checkout sessions completed at start: their order stood, their write was lost');
    return mended;
  }

  return {
    create,
    update,
    cancel,
    complete,
    recoverCompletions,
    get: load,
    list: (q: Parameters<CheckoutSessionStore['list']>[0]) => d.store.list(q),
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
