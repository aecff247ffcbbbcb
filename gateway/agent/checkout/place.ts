import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import {
  type CheckoutSession,
  orderIdOfSession,
  promotionIdsOf,
  updateSession,
  withProblem,
  withStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import {
  checkoutRequest,
  InvalidPlaceOrder,
  OrderIdConflict,
  type OrderLine,
} from '../../../subgraphs/procurement/domain/purchase-order.ts';
import type { SpendLedger } from '../../../subgraphs/procurement/spend/ledger.ts';
import { candidateSubjects, textOfCents } from '../../../subgraphs/procurement/spend/policy.ts';
import { appliedPolicy, decideApproval, withPolicy } from '../approval/approval.ts';
import { DomainUnavailable } from '../order/order-port.ts';
import type { SessionCore } from './lifecycle.ts';
import type { Price } from './price.ts';
import type { RedemptionsPort } from './redemptions.ts';
import { type CheckoutDeps, CheckoutUnavailable, type Outcome } from './types.ts';

/**
 * Spend, approval and the order, for a session marked complete_in_progress. `rehearsal`: the
 * warm-up's (CompleteCommand.rehearsal): nothing stays reserved, redeemed or ordered.
 */
export type Place = (
  s: CheckoutSession,
  owner: SpiffeId,
  traceId: string,
  rehearsal?: boolean,
) => Promise<Outcome>;

type LedgerStatus = Awaited<ReturnType<SpendLedger['status']>>;
type Redeemed = Awaited<ReturnType<RedemptionsPort['redeem']>>;

/**
 * A completion's three steps after it took its session, each keyed by the session's order id:
 * the spend reservation, the promotions' redemptions, the order. A refusal of the first two is a
 * business outcome (the session, not ready, with the message); a failure of any is 503.
 */
export function createPlacement(d: CheckoutDeps, price: Price, core: SessionCore): Place {
  const { persist, abandon, noOrderUnder } = core;

  /** The SKU rule, then the total reserved in one atomic ledger step: a refusal's message, or the status approval is judged by. */
  async function reserveSpend(
    s: CheckoutSession,
    owner: SpiffeId,
    orderId: string,
  ): Promise<{ refused: string } | { status: LedgerStatus }> {
    // place() took no session without lines.
    const first = s.lines[0] as CheckoutSession['lines'][number];
    const candidates = candidateSubjects(owner);
    try {
      let status = await d.spend.ledger.status(candidates, d.clock.now());
      const refusedSku = status?.policy.skuPrefixes?.length
        ? s.lines.find((l) => !status?.policy.skuPrefixes?.some((p) => l.sku.startsWith(p)))
        : undefined;
      if (refusedSku) {
        d.spend.refused?.('sku-not-allowed');
        return { refused: `the spend policy does not allow ${refusedSku.sku}` };
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
        return { refused: 'no spend policy covers this agent; an operator must set one' };
      if (r.kind === 'refused') {
        const left = textOfCents(Math.max(0, r.status.policy.budgetCents - r.status.spentCents));
        return {
          refused: {
            expired: 'the spend policy has expired',
            'sku-not-allowed': `the spend policy does not allow ${first.sku}`,
            'per-order': `the total is above the spend policy's maximum per order`,
            budget: `the total is above what is left of the budget (${left} USD)`,
          }[r.reason],
        };
      }
      if (r.kind === 'reserved') status = r.status;
      return { status };
    } catch (err) {
      if (err instanceof CheckoutUnavailable) throw err;
      throw new CheckoutUnavailable(err instanceof Error ? err.message : 'spend ledger unavailable');
    }
  }

  /**
   * The discounts' redemptions under the order id: null when they are recorded (or there are
   * none), the session priced again when a promotion's cap ran out since the quote.
   */
  async function redeemPromotions(s: CheckoutSession, orderId: string): Promise<Outcome | null> {
    const promotionIds = promotionIdsOf(s);
    const customer = { orderId, customerId: s.agentId };
    const port = d.redemptions;
    if (!port || promotionIds.length === 0) return null;
    const redeem = () => port.redeem({ ...customer, promotionIds });
    // ALREADY_RECORDED answers the set recorded first under the order id, and counts nothing.
    const wanted = JSON.stringify([...promotionIds].sort());
    const another = (r: Redeemed) =>
      r.status === 'ALREADY_RECORDED' && JSON.stringify([...r.promotionIds].sort()) !== wanted;
    let redeemed: Redeemed;
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
    if (redeemed.status !== 'LIMIT_REACHED') return null;
    // A promotion's cap ran out since the quote: nothing was consumed or ordered. The
    // session is priced again without it, and the agent sees the new total first.
    await d.spend.ledger.release(orderId, d.clock.now()).catch(() => {});
    const pricing = await price(s.items, s.codes, s.currency, s.region, s.agentId);
    const names = s.discounts.filter((x) => redeemed.limitReached.includes(x.promotionId)).map((x) => x.name);
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

  /** After a rehearsed order (stored nothing): the spend and the redemptions under its id given back. */
  async function rehearsed(s: CheckoutSession, orderId: string): Promise<void> {
    await d.spend.ledger.release(orderId, d.clock.now());
    await d.redemptions?.release({ orderId, customerId: s.agentId });
  }

  return async function place(s, owner, traceId, rehearsal = false) {
    const orderId = s.orderId ?? orderIdOfSession(s.id);
    if (s.lines.length === 0) return { kind: 'not-ready', session: s };
    const lines: OrderLine[] = s.lines.map((l) => ({
      sku: l.sku,
      quantity: l.quantity,
      unitPrice: textOfCents(l.unitCents),
      discount: textOfCents(l.discountCents),
      lineTotal: textOfCents(l.totalCents),
    }));
    const total = textOfCents(s.totals.totalCents);
    const request = checkoutRequest(s.agentId, lines, total);

    const spend = await reserveSpend(s, owner, orderId);
    if ('refused' in spend) {
      const back = withStatus(s, 'not_ready_for_payment', d.clock.now(), {
        orderId: null,
        problems: withProblem(s, { kind: 'spend_refused', message: spend.refused, blocking: true }),
      });
      return { kind: 'ok', session: await persist(back) };
    }
    const repriced = await redeemPromotions(s, orderId);
    if (repriced) return repriced;

    const approval = decideApproval(spend.status ?? undefined, request);
    try {
      const placed = await d.orders.place({
        request,
        spiffeId: owner.id,
        traceId,
        orderId,
        ...(approval ? { approvalsRequired: approval.required } : {}),
        ...withPolicy(appliedPolicy(spend.status)),
        lines,
        total,
        checkoutSessionId: s.id,
        // The consent a protocol kept on the buyer (UCP's buyer consent extension, when
        // negotiated) goes with the order and its events; the domain keeps the known choices
        // (domain/buyer-consent.ts), here and behind the internal HTTP route alike.
        ...(s.buyer?.consent !== undefined ? { buyerConsent: s.buyer.consent } : {}),
        ...(rehearsal ? { rehearsal: true as const } : {}),
      });
      if (rehearsal) await rehearsed(s, orderId);
      const to = placed.status === 'PENDING_APPROVAL' ? 'pending_approval' : 'completed';
      const next = withStatus(s, to, d.clock.now(), { orderId: placed.order_id });
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
  };
}
