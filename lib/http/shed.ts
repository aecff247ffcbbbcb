import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type AdaptiveLimit, type AdaptiveLimitOptions, createAdaptiveLimit } from './adaptive-limit.ts';
import { loopPressure, STANDING_WINDOW_MS, standingOver } from './busy-stretch.ts';
import { createGate, type Gate } from './gate.ts';

/**
 * Bounded waiting (issue 48). A request that cannot start within its class's queue-time budget
 * is answered at once with 503 and Retry-After, in its protocol's error body, before any step of
 * its route runs: a shed order has not been identified, parsed, reserved or written, so its retry
 * (with the same Idempotency-Key) is safe, and an order once past this point is never shed.
 *
 * How long a request waited before its first hook is the event loop's delay: on one thread the
 * requests that have arrived wait for the loop to come round to them, so the loop's delay over the
 * last sample window is the wait the next request meets. `@fastify/under-pressure` measures it
 * (perf_hooks' monitorEventLoopDelay, its mean over each `sampleMs` window) and calls the
 * handler below when it exceeds the smallest budget; each class is then held to its own.
 * Measured from the first hook, not from the bytes' arrival in the kernel (Node cannot see
 * that): a queue in the socket's backlog shows as loop delay as soon as the loop reads it. A
 * quote read in a busy stretch of the loop longer than its budget, in a loop busy for 90 % of
 * the last half second, is shed too (lib/http/busy-stretch.ts): the stretch bounds
 * its wait since it arrived, the time in its socket included.
 */

/** How a route is held: its class's budget, and its protocol's 503 body. */
export interface ShedRoute {
  /** The budget's key (`quote`, `order`): a label of the shed counter. */
  readonly class: string;
  /** Sets the status, headers and content type of the 503 and returns its body. */
  answer(reply: FastifyReply, retryAfterSeconds: number): unknown;
}

export interface SheddingOptions {
  /** Queue-time budget per class, ms; a class without one (or 0) is never shed. */
  readonly budgetsMs: Readonly<Record<string, number>>;
  /** How often the loop's delay is read (the shedding reacts within one window). */
  readonly sampleMs: number;
  readonly retryAfterSeconds: number;
  /** The route's class and answer, or undefined for a route never shed (health, metrics, internal). */
  classify(req: FastifyRequest): ShedRoute | undefined;
  /**
   * At most this many requests of a class at once (0 or absent: no limit); the others wait their
   * class's budget for a place, then are shed (lib/http/gate.ts).
   */
  readonly concurrency?: Readonly<Record<string, number>>;
  /**
   * The limits and the gate's budgets follow each class's measured service time
   * (lib/http/adaptive-limit.ts) for the classes it names: `concurrency` is then the limit's
   * start and most, `budgetsMs` the budget's most. Absent (or another class): both fixed.
   */
  readonly adaptive?: Pick<
    AdaptiveLimitOptions,
    'min' | 'tolerance' | 'budgetFactor' | 'budgetFloorMs' | 'windowMs' | 'minSamples'
  > & { readonly classes: readonly string[] };
  /**
   * The classes also shed when a request is read in a busy stretch of the loop longer than its
   * class's budget, in a queue that stands (lib/http/busy-stretch.ts: an upper bound on its wait
   * since it arrived, the socket's included). Absent or empty: the loop's mean delay and the gates.
   */
  readonly busyStretch?: readonly string[];
  /** Requests that are never shed whatever their route (the warm-up's own). */
  exempt?(req: FastifyRequest): boolean;
  readonly metrics: Registry;
}

/** Call before any route is registered: the hook is the root's (under-pressure is not encapsulated). */
export function registerShedding(app: FastifyInstance, o: SheddingOptions): void {
  const shed = new Counter({
    name: 'http_requests_shed_total',
    help: 'Requests answered 503 at once because the event loop was later than their class queue-time budget',
    labelNames: ['class'],
    registers: [o.metrics],
  });
  // Each class's series from the start (0), so a rate over it is 0 rather than absent: the
  // shedding SLO (docs/slos.md) reads it, also where the shedding is off.
  for (const c of Object.keys(o.budgetsMs)) shed.inc({ class: c }, 0);
  const budgets = Object.values(o.budgetsMs).filter((b) => b > 0);
  if (budgets.length === 0) return;
  const refuse = (route: ShedRoute, reply: FastifyReply) => {
    shed.inc({ class: route.class });
    reply.code(503).header('retry-after', String(o.retryAfterSeconds));
    return route.answer(reply, o.retryAfterSeconds) ?? {};
  };
  // The loop's delay as under-pressure last read it (its decoration exists once it is loaded).
  const loopDelay = () =>
    (app as Partial<{ memoryUsage(): { eventLoopDelay: number } }>).memoryUsage?.().eventLoopDelay ?? 0;
  admitOnRequest(app, o, refuse, loopDelay);
  // Returns undefined to let the request on, or the 503's body: under-pressure then sends it and
  // calls no later hook (its types say void; its code sends any other value: index.js,
  // handlePressure). Sending here and resolving would run the next hook while onSend hooks run.
  const pressureHandler = (req: FastifyRequest, reply: FastifyReply, type: string, value?: number) => {
    if (type !== underPressure.TYPE_EVENT_LOOP_DELAY || value === undefined) return undefined;
    const route = o.classify(req);
    if (!route || o.exempt?.(req)) return undefined;
    const budget = o.budgetsMs[route.class] ?? 0;
    // A window without a single sample (under-pressure reads it as Infinity) means the loop was
    // blocked for the whole window: at least `sampleMs` late, not later than every budget.
    const delay = Number.isFinite(value) ? value : o.sampleMs;
    if (budget <= 0 || delay <= budget) return undefined;
    return refuse(route, reply);
  };
  app.register(underPressure, {
    maxEventLoopDelay: Math.min(...budgets),
    sampleInterval: o.sampleMs,
    pressureHandler: pressureHandler as (req: FastifyRequest, reply: FastifyReply, type: string) => void,
  });
}

/**
 * The root onRequest hook that admits a request (the route classified once): first the busy
 * stretch's bound for its classes, then its class's gate (limitConcurrency). The stretch: under a
 * lasting overload the loop's mean delay stays near the budget while requests wait in their
 * sockets for turns that read hundreds of others, so at 150 % of the maximum the accepted quotes'
 * p99 was 106–114 ms with the mean alone and 23–27 ms with this bound (docs/benchmarks.md,
 * "Overload", session 58). A request shed by it takes no place in a gate.
 */
function admitOnRequest(
  app: FastifyInstance,
  o: SheddingOptions,
  refuse: (route: ShedRoute, reply: FastifyReply) => unknown,
  loopDelay: () => number,
): void {
  const stretched = o.busyStretch ?? [];
  const pressure = stretched.length > 0 ? loopPressure(STANDING_WINDOW_MS) : undefined;
  if (pressure) app.addHook('onClose', async () => pressure.stop());
  const enter = limitConcurrency(app, o, loopDelay);
  if (!pressure && !enter) return;
  app.addHook('onRequest', async (req, reply) => {
    // Read for every request, shed or not: each reading keeps the stretch's start exact.
    const loop = pressure?.read();
    const route = o.classify(req);
    if (!route || o.exempt?.(req)) return;
    const budget = stretched.includes(route.class) ? (o.budgetsMs[route.class] ?? 0) : 0;
    if (loop && standingOver(loop, budget)) return reply.send(refuse(route, reply));
    if (enter && !(await enter(req, route))) return reply.send(refuse(route, reply));
  });
}

/**
 * What is left of a class's queue-time budget when its request reaches the gate: the budget is
 * counted from the request's arrival (issue 48), and before its first hook ran it had already
 * waited about the loop's delay (lib/http/shed.ts's note). Without this the gate let a request
 * wait its whole budget again after the loop had made it wait nearly as long: the accepted p99
 * at 150 % of the maximum was about two budgets plus the service (110–115 ms against a 30 ms
 * budget, docs/benchmarks.md "Overload"). A window without a sample (Infinity) counts as
 * `sampleMs` late, as the pressure handler reads it.
 */
export function remainingBudget(budgetMs: number, loopDelayMs: number, sampleMs: number): number {
  if (budgetMs <= 0) return 0;
  const delay = Number.isFinite(loopDelayMs) ? Math.max(0, loopDelayMs) : sampleMs;
  return Math.max(0, budgetMs - delay);
}

/**
 * The classes' concurrency limits (lib/http/gate.ts): a request takes a place in its class's
 * gate in the root onRequest hook (admitOnRequest), waiting at most what is left of its budget (remainingBudget),
 * and gives it back when its response is sent or its client goes away. With `adaptive`, the
 * limit and the budget are the class's AdaptiveLimit's, fed each answered request's time from
 * its place to its response.
 */
function limitConcurrency(
  app: FastifyInstance,
  o: SheddingOptions,
  loopDelay: () => number,
): ((req: FastifyRequest, route: ShedRoute) => Promise<boolean>) | undefined {
  const classes = new Map<string, { gate: Gate; adaptive?: AdaptiveLimit; budget(): number }>();
  for (const [c, n] of Object.entries(o.concurrency ?? {})) {
    const ceiling = o.budgetsMs[c] ?? 0;
    if (n <= 0 || ceiling <= 0) continue;
    if (!o.adaptive?.classes.includes(c)) {
      classes.set(c, { gate: createGate(n), budget: () => ceiling });
      continue;
    }
    const { classes: _, ...tuning } = o.adaptive;
    const adaptive = createAdaptiveLimit({ ...tuning, initial: n, max: n, budgetCeilingMs: ceiling });
    classes.set(c, { gate: createGate(() => adaptive.limit), adaptive, budget: () => adaptive.budgetMs });
  }
  if (classes.size === 0) return undefined;
  if (o.adaptive) gaugeLimits(o.metrics, classes);
  const held = new WeakMap<
    FastifyRequest,
    { gate: Gate; adaptive: AdaptiveLimit | undefined; at: number; inFlight: number }
  >();
  const leave = async (req: FastifyRequest, reply?: FastifyReply) => {
    const h = held.get(req);
    if (!h) return;
    held.delete(req);
    const now = performance.now();
    // Only a served request's time is the service's: an aborted one's says nothing, and a
    // refused body's (4xx) or a failure's is cheaper than a quote (many would lower the baseline).
    if (reply && reply.statusCode < 400) h.adaptive?.record(now, now - h.at, h.inFlight);
    h.gate.leave();
  };
  app.addHook('onResponse', leave);
  app.addHook('onRequestAbort', (req) => leave(req));
  // Whether the request took a place within what is left of its class's budget.
  return async (req, route) => {
    const cls = classes.get(route.class);
    if (!cls) return true;
    const budget = remainingBudget(cls.budget(), loopDelay(), o.sampleMs);
    if (!(await cls.gate.enter(budget))) return false;
    // One shape for every entry (V8 keeps one hidden class).
    held.set(req, {
      gate: cls.gate,
      adaptive: cls.adaptive,
      at: performance.now(),
      inFlight: cls.gate.running,
    });
    return true;
  };
}

/** The adaptive limits as gauges, read at each scrape: what the shedding holds each class to now. */
function gaugeLimits(metrics: Registry, classes: Map<string, { adaptive?: AdaptiveLimit }>): void {
  const each = (f: (a: AdaptiveLimit) => number | undefined) =>
    function (this: Gauge) {
      for (const [c, { adaptive }] of classes) {
        const v = adaptive && f(adaptive);
        if (v !== undefined) this.set({ class: c }, v);
      }
    };
  new Gauge({
    name: 'http_concurrency_limit',
    help: 'Requests of a class allowed to run at once in this process now (adaptive, issue 48)',
    labelNames: ['class'],
    registers: [metrics],
    collect: each((a) => a.limit),
  });
  new Gauge({
    name: 'http_queue_budget_seconds',
    help: 'How long a request of a class may wait for a place now (adaptive, issue 48)',
    labelNames: ['class'],
    registers: [metrics],
    collect: each((a) => a.budgetMs / 1000),
  });
  new Gauge({
    name: 'http_service_baseline_seconds',
    help: "A class's measured service time without queueing, from which its limit and budget follow (issue 48)",
    labelNames: ['class'],
    registers: [metrics],
    collect: each((a) => (a.baselineMs === undefined ? undefined : a.baselineMs / 1000)),
  });
}
