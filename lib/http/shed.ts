import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
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
 * that): a queue in the socket's backlog shows as loop delay as soon as the loop reads it.
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
  limitConcurrency(app, o, refuse, loopDelay);
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
 * gate in the root onRequest hook, waiting at most what is left of its budget (remainingBudget),
 * and gives it back when its response is sent or its client goes away.
 */
function limitConcurrency(
  app: FastifyInstance,
  o: SheddingOptions,
  refuse: (route: ShedRoute, reply: FastifyReply) => unknown,
  loopDelay: () => number,
): void {
  const gates = new Map(
    Object.entries(o.concurrency ?? {})
      .filter(([c, n]) => n > 0 && (o.budgetsMs[c] ?? 0) > 0)
      .map(([c, n]) => [c, createGate(n)]),
  );
  if (gates.size === 0) return;
  const held = new WeakMap<FastifyRequest, Gate>();
  app.addHook('onRequest', async (req, reply) => {
    const route = o.classify(req);
    const gate = route && gates.get(route.class);
    if (!route || !gate || o.exempt?.(req)) return;
    const budget = remainingBudget(o.budgetsMs[route.class] ?? 0, loopDelay(), o.sampleMs);
    if (!(await gate.enter(budget))) return reply.send(refuse(route, reply));
    held.set(req, gate);
  });
  const leave = async (req: FastifyRequest) => {
    held.get(req)?.leave();
    held.delete(req);
  };
  app.addHook('onResponse', leave);
  app.addHook('onRequestAbort', leave);
}
