import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import {
  type CheckoutSession,
  completionHeld,
  effectiveStatus,
  orderIdOfSession,
  promotionIdsOf,
  withProblem,
  withStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import type { OrderPort } from '../order/order-port.ts';
import { type CheckoutDeps, CheckoutUnavailable } from './types.ts';

/**
 * The session core every command stands on: a session read as it stands now (expired, following
 * its order, a stopped completion settled), written with compare-and-set, and a completion
 * undone with what it held given back.
 */
export function createSessionCore(d: CheckoutDeps) {
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

  /** Gives back what a completion redeemed under `orderId`, when the session's discounts had any. */
  async function releaseRedemptions(s: CheckoutSession, orderId: string): Promise<void> {
    if (d.redemptions && promotionIdsOf(s).length > 0)
      await d.redemptions.release({ orderId, customerId: s.agentId });
  }

  /**
   * Undoes a completion that placed no order: the session goes back to not ready (with a
   * message; a new completion may proceed), and only if that write wins (no other completion
   * took the session over) are the reservation and the redemptions given back.
   */
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

  return { current, statusOfOrder, settle, releaseRedemptions, abandon, noOrderUnder, persist, load };
}

export type SessionCore = ReturnType<typeof createSessionCore>;
