import { randomUUID } from 'node:crypto';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import { stockProblems } from '../../../subgraphs/procurement/checkout/pricing.ts';
import {
  type CheckoutSession,
  COMPLETION_PROBLEMS,
  completable,
  completionHeld,
  isOpen,
  orderIdOfSession,
  orderPlaced,
  updateSession,
  withProblem,
  withStatus,
} from '../../../subgraphs/procurement/checkout/session.ts';
import { textOfCents } from '../../../subgraphs/procurement/spend/policy.ts';
import type { SessionCore } from './lifecycle.ts';
import type { Place } from './place.ts';
import type { Price } from './price.ts';
import {
  type CheckoutDeps,
  CheckoutUnavailable,
  type CompleteCommand,
  type Outcome,
  RECOVERED,
} from './types.ts';

/**
 * Completion as a purchase order: the session is marked `complete_in_progress` (updates now
 * wait), re-priced if its quote ran out (a changed total is refused, not charged), its total is
 * reserved under the spend policy in one atomic ledger step, and the order is placed with the
 * session's lines (./place.ts). Above the policy's approvalAbove the order waits for an operator
 * and the session is `pending_approval`. Every step is keyed by the session's order id, so a
 * retry (or a resumed completion after a crash) never reserves or orders twice.
 */
export function createCompletion(d: CheckoutDeps, price: Price, core: SessionCore, place: Place) {
  const holdMs = d.completionHoldMs ?? 30_000;
  const { load, persist } = core;

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
    if (c.authorizedVersion !== undefined && s.version !== c.authorizedVersion)
      return { kind: 'busy', session: s };
    if (!completable(s)) return { kind: isOpen(s) ? 'not-ready' : 'not-allowed', session: s };
    if (s.status !== 'complete_in_progress') {
      const checked = await stillAsQuoted(s, now);
      if (checked.kind === 'changed') return { kind: 'ok', session: checked.session };
      s = checked.session;
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
      // A resumed completion keeps the authorization it was taken with.
      ...(s.status !== 'complete_in_progress' && c.authorization ? { authorization: c.authorization } : {}),
      // ACP: the payment data it was completed with, as given (a resumed completion keeps its own).
      ...(s.status !== 'complete_in_progress' && c.paymentData ? { paymentData: c.paymentData } : {}),
    };
    // Embedded (one process writes the store) the mark is held in memory, not written: it is a
    // lock no other process needs to see (docs/acp.md, "One process, one writer").
    const took = d.store.hold ? await d.store.hold(started) : await d.store.replace(started);
    if (!took) {
      const again = await load(id, owner);
      return again ? { kind: 'busy', session: again } : { kind: 'not-found' };
    }
    return place(started, owner, c.traceId, c.rehearsal === true);
  }

  /**
   * Before a completion takes a session: re-priced when the quote's 15 minutes are over (its
   * prices are no longer promised), else its stock re-checked (not reserved: docs/acp.md,
   * "Stock"), so an order is never placed for a line the catalog no longer has enough of. A
   * changed total or a short line is a business outcome of the completion: the session, written
   * with the message saying why (`changed`).
   */
  async function stillAsQuoted(
    s: CheckoutSession,
    now: number,
  ): Promise<{ kind: 'same' | 'changed'; session: CheckoutSession }> {
    if (!s.quote || Date.parse(s.quote.expiresAt) <= now) {
      const pricing = await price(s.items, s.codes, s.currency, s.region, s.agentId);
      const repriced = updateSession(s, {}, pricing, now);
      // The same total: the completion goes on with the new quote, written with the completion's
      // own step (one version on from the stored one). `repriced` is not written, so it keeps
      // the stored version: one further, the completion's compare-and-set could never match,
      // and every retry answered busy (test/acp/expired-quote.test.ts).
      if (repriced.status === 'ready_for_payment' && repriced.totals.totalCents === s.totals.totalCents)
        return { kind: 'same', session: { ...repriced, version: s.version } };
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
      return { kind: 'changed', session: await persist(shown) };
    }
    const short = await shortOfStock(s);
    if (short.length === 0) return { kind: 'same', session: s };
    const held = withStatus(s, 'not_ready_for_payment', now, { problems: [...s.problems, ...short] });
    return { kind: 'changed', session: await persist(held) };
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

  return complete;
}
