import { orderIdOfSession, withStatus } from '../../../subgraphs/procurement/checkout/session.ts';
import type { SessionCore } from './lifecycle.ts';
import { type CheckoutDeps, RECOVERED } from './types.ts';

/** Open sessions looked at by recoverCompletions (newest first): a day of sessions at a high rate. */
const RECOVER_AT_MOST = 100_000;

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
export async function recoverCompletions(d: CheckoutDeps, core: SessionCore): Promise<number> {
  const { statusOfOrder, releaseRedemptions } = core;
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
