import type { Logger } from '../../../lib/logger.ts';
import type { OrderDomain } from '../domain/order-domain.ts';

/** Pending orders one pass expires before it yields (the pass goes on while batches are full). */
export const SWEEP_BATCH = 100;

export interface ExpirySweep {
  /** One pass now (tests; the timer runs the same). Resolves with how many orders it expired. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The periodic expiry of PENDING_APPROVAL orders (issue 22), in every procurement process.
 * Spread, not bursty: each pass waits a random 50–150 % of `meanMs` after the previous one
 * ended, so replicas drift apart instead of sweeping in step, and a pass expires at most
 * SWEEP_BATCH orders per store round. Safe with several replicas: each expiry is written only
 * over the version it read (store.transition), so when two sweeps (or a sweep and an operator)
 * reach one order, one writes and the other writes nothing: one OrderExpired, one release.
 */
export function startExpirySweep(o: { domain: OrderDomain; meanMs: number; log: Logger }): ExpirySweep {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  const pass = async () => {
    let total = 0;
    for (;;) {
      const n = await o.domain.expireDue(SWEEP_BATCH);
      total += n;
      if (n < SWEEP_BATCH || stopped) return total;
    }
  };
  const runOnce = () => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(
      () =>
        void runOnce()
          .catch((err) => o.log.warn({ err }, 'approval expiry sweep failed; the next pass retries'))
          .finally(schedule),
      o.meanMs * (0.5 + Math.random()),
    );
    timer.unref();
  };
  schedule();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
