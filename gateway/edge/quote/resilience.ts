import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  TaskCancelledError,
} from 'cockatiel';

/**
 * The dependency answered and refused this input (a 4xx, a contract violation): the caller's
 * problem, not an outage. It fails the call but never counts towards opening the breaker, or
 * a few crafted requests could switch a dependency off for every customer.
 */
export class RefusedInput extends Error {
  override name = 'RefusedInput';
}

/** What a guarded call is given: a signal that aborts when its time is up, made when first read. */
export interface Deadline {
  readonly signal: AbortSignal;
}

/** One dependency's protection: a timeout per call inside a circuit breaker. */
export interface Guard {
  readonly name: string;
  run<T>(fn: (deadline: Deadline) => Promise<T>): Promise<T>;
  /** True while the breaker is open: calls fail at once without reaching the dependency. */
  isOpen(): boolean;
}

export interface GuardOptions {
  timeoutMs: number;
  /** Consecutive failures (timeouts included) that open the breaker. */
  failures: number;
  /** How long an open breaker waits before one trial call. */
  halfOpenAfterMs: number;
  onStateChange?: (name: string, open: boolean) => void;
}

/**
 * A call's deadline. The AbortController is made only when the callee reads `signal` (the HTTP
 * adapters do, to cancel their requests; the in-process ones never do). cockatiel's timeout
 * policy makes one for every call, and a Node AbortSignal is built by changing an object's
 * prototype, so each one got hidden classes of its own: three per call, two calls per quote, on
 * the embedded quote's path where nothing listens (docs/performance.md, "Fifth pass").
 */
class CallDeadline implements Deadline {
  #controller: AbortController | undefined;
  #expired = false;

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.#expired) this.#controller.abort();
    return this.#controller.signal;
  }

  expire(): void {
    this.#expired = true;
    this.#controller?.abort();
  }
}

/**
 * `fn`, or a TaskCancelledError when it has not settled within `ms` (the call is then given
 * up on, and its signal aborts); as cockatiel's aggressive timeout, without its AbortController.
 */
function within<T>(ms: number, fn: (deadline: Deadline) => Promise<T>): Promise<T> {
  const deadline = new CallDeadline();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      deadline.expire();
      reject(new TaskCancelledError(`Operation timed out after ${ms}ms`));
    }, ms);
    const settle = (done: () => void) => {
      clearTimeout(timer);
      done();
    };
    let call: Promise<T>;
    try {
      call = fn(deadline);
    } catch (err) {
      call = Promise.reject(err);
    }
    call.then(
      (value) => settle(() => resolve(value)),
      (err) => settle(() => reject(err)),
    );
  });
}

/**
 * The breaker wraps the timeout, so a slow dependency counts as a failing one: after
 * `failures` timeouts in a row the quote stops waiting for it at all and goes straight to its
 * fallback, until a trial call after `halfOpenAfterMs` succeeds.
 */
export function createGuard(name: string, opts: GuardOptions): Guard {
  const breaker: CircuitBreakerPolicy = circuitBreaker(
    handleWhen((err) => !(err instanceof RefusedInput)),
    {
      halfOpenAfter: opts.halfOpenAfterMs,
      breaker: new ConsecutiveBreaker(opts.failures),
    },
  );
  breaker.onStateChange((state) => opts.onStateChange?.(name, state === CircuitState.Open));
  return {
    name,
    run: (fn) => breaker.execute(() => within(opts.timeoutMs, fn)),
    isOpen: () => breaker.state === CircuitState.Open,
  };
}

/** A guarded call that yields `fallback` instead of failing. */
export async function orElse<T>(
  guard: Guard,
  fn: (deadline: Deadline) => Promise<T>,
  fallback: T,
): Promise<T> {
  try {
    return await guard.run(fn);
  } catch {
    return fallback;
  }
}
