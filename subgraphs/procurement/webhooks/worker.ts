import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { nextRetryDelayMs, type RetryPolicy } from './retry-schedule.ts';
import type { Sender, SendResult } from './sender.ts';
import type { WebhookStore } from './store.ts';
import type { AttemptOutcome } from './types.ts';

/** An attempt's result → what happens to the delivery. Pure: time and randomness are given. */
export function outcomeOf(
  result: SendResult,
  attempt: number,
  policy: RetryPolicy,
  now: Date,
  random: () => number = Math.random,
): AttemptOutcome {
  const statusCode = 'statusCode' in result ? result.statusCode : null;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { kind: 'delivered', statusCode };
  if (statusCode === 410) return { kind: 'gone', statusCode };
  const error =
    statusCode === null ? (result as { error: string }).error : `the receiver answered ${statusCode}`;
  const delay = nextRetryDelayMs(policy, attempt, random);
  if (delay === undefined)
    return { kind: 'failed', statusCode, error: `${error} (attempt ${attempt} of ${policy.maxAttempts})` };
  return { kind: 'retry', statusCode, error, at: new Date(now.getTime() + delay) };
}

export interface WorkerOptions {
  readonly store: WebhookStore;
  readonly sender: Sender;
  readonly clock: Clock;
  readonly log: Logger;
  readonly policy: RetryPolicy;
  readonly batchSize: number;
  readonly timeoutMs: number;
  readonly pollIntervalMs: number;
  /** Also disables the endpoint when a receiver answers 410 Gone. */
  readonly onGone: (endpointId: string, now: Date) => Promise<void>;
  /** Each attempt's outcome (the metrics). */
  readonly onAttempt?: (outcome: AttemptOutcome['kind']) => void;
  /**
   * A delivery that ended: delivered, or dead (its last attempt failed, or the receiver answered
   * 410), with the seconds since it was created (the metrics; docs/slos.md, "Webhook delivery").
   */
  readonly onFinished?: (end: 'delivered' | 'dead', seconds: number) => void;
  readonly random?: () => number;
  /** Finished deliveries older than this are deleted (at most once an hour, in bounded batches). */
  readonly retentionMs: number;
}

const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1000;

export interface DeliveryWorker {
  /** Look for due deliveries now (a new one was enqueued or replayed). */
  kick(): void;
  /** One claim-and-send round; resolves with the number of attempts made. */
  runOnce(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Claims due deliveries in bounded batches and sends them. Any number of workers (one per
 * procurement replica) share the table: the claim's row locks and lease keep one delivery with
 * one worker at a time. An idle worker sleeps until the next due retry, at most
 * `pollIntervalMs` (rows made due elsewhere, such as a claim whose worker died, are found then).
 */
export function createDeliveryWorker(o: WorkerOptions): DeliveryWorker {
  // Longer than any attempt can take (the sender gives up at timeoutMs), so a claimed delivery
  // is never due again while its attempt runs; a crashed worker's claim expires after it.
  const leaseMs = 2 * o.timeoutMs + 5_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let prunedAt = Number.NEGATIVE_INFINITY;

  /** Keeps the table bounded by age; one batch per hour is plenty for any order rate this system takes. */
  const prune = async () => {
    const now = o.clock.now();
    if (now - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = now;
    const n = await o.store.prune(new Date(now - o.retentionMs), PRUNE_BATCH);
    if (n > 0) o.log.info({ deleted: n }, 'old webhook deliveries deleted');
  };

  const runOnce = async (): Promise<number> => {
    const now = new Date(o.clock.now());
    const claimed = await o.store.claimDue(now, new Date(now.getTime() + leaseMs), o.batchSize);
    await Promise.all(
      claimed.map(async (d) => {
        const sentAt = new Date(o.clock.now());
        const result = await o.sender.send(d, sentAt);
        const done = new Date(o.clock.now());
        const outcome = outcomeOf(result, d.attempt, o.policy, done, o.random);
        await o.store.record(d, outcome, done);
        o.onAttempt?.(outcome.kind);
        if (outcome.kind !== 'retry')
          o.onFinished?.(
            outcome.kind === 'delivered' ? 'delivered' : 'dead',
            Math.max(0, (done.getTime() - d.createdAt.getTime()) / 1000),
          );
        o.log.info(
          {
            deliveryId: d.deliveryId,
            endpointId: d.endpointId,
            attempt: d.attempt,
            outcome: outcome.kind,
            result,
          },
          'webhook attempt',
        );
        if (outcome.kind === 'gone') await o.onGone(d.endpointId, done);
      }),
    );
    return claimed.length;
  };

  const schedule = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(kick, Math.max(0, ms));
    timer.unref();
  };

  const loop = async () => {
    try {
      // A full batch means more may be due: go on without waiting.
      while (!closed && (await runOnce()) === o.batchSize) {}
      await prune();
      const due = await o.store.nextDueAt();
      schedule(due ? Math.min(o.pollIntervalMs, due.getTime() - o.clock.now()) : o.pollIntervalMs);
    } catch (err) {
      o.log.error({ err }, 'webhook delivery round failed');
      schedule(o.pollIntervalMs);
    }
  };

  function kick(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    again = false;
    running = loop().finally(() => {
      running = undefined;
      // Kicked after the loop's last look: look again rather than sleep on it.
      if (again) kick();
    });
  }

  return {
    kick,
    runOnce,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}
