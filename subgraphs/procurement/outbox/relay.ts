import { ExponentialBackoff, type IBackoff } from 'cockatiel';
import type { CloudEvent } from '../../../lib/events/cloudevent.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { OutboxStore } from '../store/store.ts';
import { toCloudEvent } from './order-events.ts';

export interface RelayOptions {
  readonly outbox: OutboxStore;
  /** The event bus's publishEvent: rejects when the bus did not take the event. */
  readonly publish: (event: CloudEvent) => Promise<void>;
  readonly log: Pick<Logger, 'warn' | 'error'>;
  /** Rows per pass (OUTBOX_BATCH_SIZE): bounds the transaction and the memory of one pass. */
  readonly batchSize: number;
  /** The slow poll (OUTBOX_POLL_MS): picks up rows another replica's crash left behind. */
  readonly pollMs: number;
  /** Relayed rows are forgotten after this long. */
  readonly retentionMs?: number;
  readonly now?: () => number;
  /**
   * Commits within this window share one pass (default 50 ms). Why: on the embedded store
   * (PGlite: one connection, run on the event loop) a relay transaction after every commit
   * kept the store from the orders: 1,100 orders/s against 2,630 with no relay at all; one pass
   * per 50 ms gives ~2,200 (10 connections, CPU profile in docs/performance.md).
   */
  readonly coalesceMs?: number;
}

export interface OutboxRelay {
  /** Relay now (after a commit); coalesced with a pass already running. */
  wake(): void;
  /** Resolves when no pass is running (a retry after a bus failure may still be scheduled). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const SEVEN_DAYS_MS = 7 * 24 * 3_600_000;

/**
 * Moves committed outbox rows to the event bus: woken after each commit, plus a slow poll.
 * At least once: a pass that dies between publishing and marking leaves its rows for the next
 * pass, which publishes them again with the same CloudEvent ids (consumers deduplicate on
 * them). When the bus fails the pass stops at that row and retries after an exponential
 * backoff with jitter (cockatiel's decorrelated jitter, 100 ms up to 30 s).
 */
export function createOutboxRelay(o: RelayOptions): OutboxRelay {
  const publish = (e: Parameters<Parameters<OutboxStore['relay']>[1]>[0]) => o.publish(toCloudEvent(e));
  const now = o.now ?? Date.now;
  const backoffs = new ExponentialBackoff({ initialDelay: 100, maxDelay: 30_000 });
  let backoff: IBackoff<unknown> | undefined;
  const coalesceMs = o.coalesceMs ?? 50;
  let running: Promise<void> | undefined;
  let scheduled: NodeJS.Timeout | undefined;
  let wokenWhileRunning = false;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let lastPrune = 0;

  const failed = (err: unknown, what: string) => {
    backoff = backoff ? backoff.next(undefined) : backoffs.next();
    o.log.warn({ err, retryInMs: Math.round(backoff.duration) }, what);
    clearTimeout(retry);
    retry = setTimeout(() => {
      retry = undefined;
      wake();
    }, backoff.duration);
    retry.unref();
  };

  const pass = async () => {
    do {
      again = false;
      let r: Awaited<ReturnType<OutboxStore['relay']>>;
      try {
        r = await o.outbox.relay(o.batchSize, publish);
      } catch (err) {
        return failed(err, 'outbox relay: store unavailable');
      }
      if (r.error !== undefined) return failed(r.error, 'outbox relay: event bus refused an event');
      backoff = undefined;
      if (r.full) again = true;
    } while (again && !stopped);
  };

  function start(): void {
    if (stopped || running || retry) return;
    running = pass().finally(() => {
      running = undefined;
      // Commits during the pass: their rows go in the next window's pass, not at once.
      if (wokenWhileRunning) {
        wokenWhileRunning = false;
        wake();
      }
    });
  }

  function wake(): void {
    if (stopped) return;
    if (running) {
      wokenWhileRunning = true;
      return;
    }
    // A retry is scheduled after a failure: let its backoff run instead of hammering the bus.
    if (retry || scheduled) return;
    scheduled = setTimeout(() => {
      scheduled = undefined;
      start();
    }, coalesceMs);
    scheduled.unref();
  }

  const poll = setInterval(() => {
    if (now() - lastPrune > 3_600_000) {
      lastPrune = now();
      o.outbox
        .prune(now() - (o.retentionMs ?? SEVEN_DAYS_MS))
        .catch((err) => o.log.warn({ err }, 'outbox relay: prune failed'));
    }
    wake();
  }, o.pollMs);
  poll.unref();
  // Rows committed before this process started (a crash between commit and relay).
  wake();

  return {
    wake,
    async idle() {
      while (running || scheduled || wokenWhileRunning) {
        if (running) await running;
        else await new Promise((r) => setTimeout(r, coalesceMs));
      }
    },
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(retry);
      clearTimeout(scheduled);
      await running;
    },
  };
}
