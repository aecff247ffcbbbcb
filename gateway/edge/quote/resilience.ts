import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  TimeoutStrategy,
  timeout,
  wrap,
} from 'cockatiel';

/**
 * The dependency answered and refused this input (a 4xx, a contract violation): the caller's
 * problem, not an outage. It fails the call but never counts towards opening the breaker, or
 * a few crafted requests could switch a dependency off for every customer.
 */
export class RefusedInput extends Error {
  override name = 'RefusedInput';
}

/** One dependency's protection: a timeout per call inside a circuit breaker. */
export interface Guard {
  readonly name: string;
  run<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
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
  // abortOnReturn: false: aborting a finished call's signal builds a DOMException and
  // dispatches an event on every quote, for nothing (it showed as ~10% of a quote's CPU).
  const policy = wrap(
    breaker,
    timeout(opts.timeoutMs, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false }),
  );
  return {
    name,
    run: (fn) => policy.execute(({ signal }) => fn(signal)),
    isOpen: () => breaker.state === CircuitState.Open,
  };
}

/** A guarded call that yields `fallback` instead of failing. */
export async function orElse<T>(
  guard: Guard,
  fn: (signal: AbortSignal) => Promise<T>,
  fallback: T,
): Promise<T> {
  try {
    return await guard.run(fn);
  } catch {
    return fallback;
  }
}
