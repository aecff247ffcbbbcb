import { z } from 'zod';
import { bool, list } from './kinds.ts';

/** A list of the shedding's classes (`quote`, `order`), or `none` for the empty list. */
const shedClasses = (byDefault: string) =>
  z
    .string()
    .default(byDefault)
    .pipe(list)
    .pipe(z.array(z.enum(['quote', 'order', 'none'])))
    .transform((cs) => cs.filter((c): c is 'quote' | 'order' => c !== 'none'));

/**
 * How a process meets arriving load (issues 29 and 48): the warm-up before ready, how many
 * connections it accepts per turn of its loop, and the shedding that bounds a request's wait
 * (lib/config.ts spreads them into the one configuration object).
 */
export const loadFields = {
  /**
   * Extra descriptors of the listening socket, each accepting into the server beside its own
   * (lib/http/accept.ts): on Node 20 a listening socket accepts one connection per turn of the
   * event loop, so a burst of new connections at a new replica waited seconds in the kernel's
   * accept queue. 0 turns it off.
   */
  ACCEPT_HANDLES: z.coerce.number().int().min(0).max(256).default(16),
  /**
   * How long a starting gateway sends itself the hot read paths before /readyz says ready
   * (gateway/warm-up.ts): ready means warm. 0 turns it off (the tests' processes do).
   */
  WARM_UP_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  /**
   * The least work of a warm-up: past WARM_UP_MS it goes on until it has sent this many requests,
   * but never past WARM_UP_MAX_MS. V8 compiles what has run enough, not what ran long enough: on
   * a busy machine 2 s sent 11–251 requests instead of ~800. 0 (the default): time alone. Off by
   * default: measured under load, a floor of 1,000 moved 150–250 optimisations before ready but
   * left ~90 % of those after it (docs/performance.md, "Second 0 counted").
   */
  WARM_UP_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(0),
  WARM_UP_MAX_MS: z.coerce.number().int().min(0).max(120_000).default(8000),
  /**
   * V8 flags held only while the warm-up runs, then put back (lib/http/warm-up-v8.ts), e.g.
   * `--interrupt-budget=1024` on Node 20 (Node 24's V8 counts invocations instead:
   * `--invocation-count-for-turbofan`): V8 optimises what has run enough, and a smaller budget
   * lets the warm-up's few hundred requests reach its optimising compiler before ready. Empty
   * (the default): none; measured, 1,024 moved ~500 optimisations before ready but removed only
   * ~15 % of those after it and tripled the deoptimisations there (docs/performance.md, "V8's
   * tier-up during the warm-up"). Space-separated `--name=value` / `--name` / `--no-name`.
   */
  WARM_UP_V8_FLAGS: z
    .string()
    .trim()
    .regex(/^(--[a-z0-9][a-z0-9-_]*(=\S+)?(\s+|$))*$/, 'space-separated V8 flags (--name=value)')
    .default(''),
  /**
   * Whether the warm-up rehearses orders too (issue 48: every step, rolled back, nothing bought;
   * gateway/agent/rehearsal.ts). `false` is the warm-up as it was before, quotes and prices only:
   * the bench's A/B (docs/benchmarks.md, "Warm start").
   */
  WARM_UP_ORDERS: bool.default('true'),
  /**
   * Bounded waiting (issue 48, lib/http/shed.ts): a quote, price or read that would start later
   * than this many ms after it arrived (the event loop's delay) is answered 503 with
   * Retry-After at once instead of queueing. 0 turns it off for that class (the tests' do).
   */
  SHED_QUOTE_BUDGET_MS: z.coerce.number().min(0).max(60_000).default(30),
  /** The same for an order or a checkout completion, held longer than a quote: a sale is worth more. */
  SHED_ORDER_BUDGET_MS: z.coerce.number().min(0).max(60_000).default(100),
  /**
   * The classes also shed when a request is read in a stretch of the event loop busy for longer
   * than the class's budget without once waiting for I/O, in a loop busy for 90 % of the last half
   * second (lib/http/busy-stretch.ts): the stretch bounds the request's wait since it arrived, its
   * time in the socket included, which the loop's delay does not see. `none`: the loop's mean delay
   * and the gates only (the bench's A/B). Orders are not in the default: the cold seconds after a
   * start make stretches over their budget, and an order waits rather than being refused there.
   */
  SHED_BUSY_STRETCH: shedClasses('quote'),
  /**
   * How often the event loop's delay is read for the budgets above (ms; the shedding reacts within
   * one). A window in which the loop never ran counts as this late: a budget at or above it does
   * not shed on such windows (measured: 20 ms windows with a 20 ms budget shed nothing at 150 %).
   */
  SHED_SAMPLE_MS: z.coerce.number().int().min(10).max(10_000).default(50),
  /**
   * At most this many quotes (reads, prices, GraphQL) run at once per process; more wait up to
   * SHED_QUOTE_BUDGET_MS for a place, then are shed (lib/http/gate.ts). Far above the steady
   * state's few in flight: it bounds a request's time inside the process in overload, which the
   * loop's delay alone does not (a request takes several turns of a loop shared by hundreds).
   * 0: no limit.
   */
  SHED_QUOTE_CONCURRENCY: z.coerce.number().int().min(0).max(100_000).default(64),
  /** The same for orders, checkout completions and MCP calls (SHED_ORDER_BUDGET_MS to wait). */
  SHED_ORDER_CONCURRENCY: z.coerce.number().int().min(0).max(100_000).default(64),
  /**
   * The classes whose concurrency limit and gate budget follow their measured service time
   * (lib/http/adaptive-limit.ts): SHED_*_CONCURRENCY is then the limit's start and most,
   * SHED_*_BUDGET_MS the most a request waits for a place. `none` (the default): all fixed. The
   * quiet bench run of session 53 (docs/performance.md, issue 48) found the adaptive quote limit
   * no better than the fixed one embedded (accepted p99 at 150 % 20× and 121× the steady p99,
   * against 23× and 21×) and shedding more than the excess distributed (55 % of the quotes at
   * 150 %, 2xx/s 904 against 1,533), with steady-state shedding after a warm start; so it is an
   * option, not the default. Orders should not adapt: an order's service time rises with the
   * quotes beside it, so its own limit shrank and shed 55 % of the orders at 150 %.
   */
  SHED_ADAPTIVE_CLASSES: shedClasses('none'),
  /** The least an adaptive limit falls to. */
  SHED_LIMIT_MIN: z.coerce.number().int().min(1).max(100_000).default(4),
  /**
   * A window's median service time allowed, as a multiple of the class's baseline (the median
   * service time of windows that did not queue), before its limit shrinks.
   */
  SHED_LIMIT_TOLERANCE: z.coerce.number().min(1).max(100).default(2),
  /** The gate's queue-time budget as a multiple of the baseline, between the floor and SHED_*_BUDGET_MS. */
  SHED_BUDGET_FACTOR: z.coerce.number().min(0).max(1000).default(4),
  SHED_BUDGET_FLOOR_MS: z.coerce.number().min(0).max(60_000).default(2),
  /** Retry-After of a shed request, seconds. */
  SHED_RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).max(3600).default(1),
};
