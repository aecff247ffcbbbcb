/**
 * A class's concurrency limit and queue-time budget that follow its measured service time
 * (issue 48), instead of a fixed 64 in flight and 30/100 ms to wait. The goal is a ratio: at 150 %
 * of the maximum the accepted requests keep a p99 within 5× their steady one. With fixed numbers
 * the accepted tail was the budget plus 64 requests' worth of one thread (~100 ms), whatever the
 * machine: 15× on a machine whose steady p99 was 6.6 ms (docs/benchmarks.md, "Overload").
 *
 * The algorithm, in the manner of Netflix's concurrency-limits (gradient) and TCP Vegas:
 * - the *baseline* is the median service time (from its place at the gate to its response) of
 *   each window, followed quickly downwards and slowly upwards, and upwards only from windows
 *   that did not fill half the limit, so it stays the service time without queueing; until a
 *   first such window the limit and budget stay at their start (`initial`, the ceiling);
 * - each window whose median service time is above `tolerance × baseline` shrinks the limit by
 *   that ratio (at most by half): the requests in flight were queueing on the thread (or on a
 *   subgraph behind it); a window within it whose requests filled the limit grows it by √limit;
 * - the queue-time budget is `budgetFactor × baseline`, between a floor and a ceiling (the
 *   configured SHED_*_BUDGET_MS): a request waits for a place a few service times, not a
 *   constant tuned for one machine.
 * Windows close on the clock the caller passes (`record(now, …)`), after at least `windowMs` and
 * `minSamples` samples, so the algorithm is deterministic under test (test/foundation/adaptive-limit.test.ts).
 *
 * Written by hand: the npm registry has fixed concurrency limiters (p-limit, bagpipe…) and
 * event-loop-delay shedding (@fastify/under-pressure, used beside this; overload-protection),
 * but no maintained adaptive concurrency limit; Netflix's is Java, tower-acc Rust, Envoy's a
 * proxy filter. The state is a handful of numbers and a buffer of one window's samples.
 */

export interface AdaptiveLimitOptions {
  /** The limit before any window closed. */
  readonly initial: number;
  readonly min: number;
  readonly max: number;
  /** A window's median service time allowed, as a multiple of the baseline, before the limit shrinks. */
  readonly tolerance: number;
  /** The queue-time budget as a multiple of the baseline. */
  readonly budgetFactor: number;
  readonly budgetFloorMs: number;
  /** The budget before any baseline, and its most. */
  readonly budgetCeilingMs: number;
  readonly windowMs: number;
  readonly minSamples: number;
}

export interface AdaptiveLimit {
  /** How many requests of the class may run at once now (an integer ≥ `min`). */
  readonly limit: number;
  /** How long a request of the class may wait for a place now, ms. */
  readonly budgetMs: number;
  /** The service time without queueing, ms, once a window has closed. */
  readonly baselineMs: number | undefined;
  /**
   * A started request finished at `nowMs` after `serviceMs`; `inFlight` requests of its class
   * were running when it started (itself included).
   */
  record(nowMs: number, serviceMs: number, inFlight: number): void;
}

/** How fast the baseline follows a lower window (a share of the gap per window), and a higher one. */
const DOWN = 0.5;
const UP = 0.02;
/** A window never holds more than this many samples (it closes early). */
const CAPACITY = 4096;

/** The q-quantile of the first n values, sorted in place (nearest rank). */
function quantile(sorted: Float64Array, n: number, q: number): number {
  return sorted[Math.min(n - 1, Math.floor(q * n))] as number;
}

export function createAdaptiveLimit(o: AdaptiveLimitOptions): AdaptiveLimit {
  const samples = new Float64Array(CAPACITY);
  let n = 0;
  let windowStart: number | undefined;
  let fullest = 0;
  // A most below the least (SHED_*_CONCURRENCY under SHED_LIMIT_MIN) wins: the limit never passes it.
  const least = Math.min(o.min, o.max);
  let limit = Math.min(o.max, Math.max(least, o.initial));
  let baseline: number | undefined;

  const close = () => {
    const window = samples.subarray(0, n).sort();
    const median = quantile(window, n, 0.5);
    // A window whose requests never filled half the limit did not queue at the gate: its times
    // may raise the baseline (or set the first). Any window may lower it. Otherwise, in an
    // overload that lasts, the queue's own times would become the baseline and the limit would
    // grow back with them (on one thread every request in flight takes as long as the others).
    const quiet = fullest * 2 <= limit;
    if (baseline === undefined) baseline = quiet ? median : undefined;
    else if (median < baseline) baseline += (median - baseline) * DOWN;
    else if (quiet) baseline += (median - baseline) * UP;
    if (baseline !== undefined) {
      const target = o.tolerance * baseline;
      if (median > target) limit = Math.max(least, limit * Math.max(0.5, target / median));
      else if (fullest >= Math.floor(limit)) limit = Math.min(o.max, limit + Math.sqrt(limit));
    }
    n = 0;
    fullest = 0;
  };

  return {
    get limit() {
      return Math.floor(limit);
    },
    get budgetMs() {
      if (baseline === undefined) return o.budgetCeilingMs;
      return Math.min(o.budgetCeilingMs, Math.max(o.budgetFloorMs, o.budgetFactor * baseline));
    },
    get baselineMs() {
      return baseline;
    },
    record(nowMs, serviceMs, inFlight) {
      if (!(serviceMs >= 0)) return;
      if (windowStart === undefined) windowStart = nowMs;
      samples[n++] = serviceMs;
      if (inFlight > fullest) fullest = inFlight;
      if ((nowMs - windowStart >= o.windowMs && n >= o.minSamples) || n === CAPACITY) {
        close();
        // The next window starts with its first answer.
        windowStart = undefined;
      }
    },
  };
}
