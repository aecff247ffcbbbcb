import type { CloudEvent } from '../events/cloudevent.ts';

/**
 * What the rest of the code asks of tracing, with the answers it gets when tracing is off:
 * nothing, at no cost. No OpenTelemetry import here: the embedded process must not load even
 * the API when nobody collects traces. `startTracing` (./sdk.ts) swaps in the real answers.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The CloudEvents Distributed Tracing extension of an event published now: the active span's context. */
  eventContext(): Pick<CloudEvent, 'traceparent' | 'tracestate'>;
  /** Runs a handler of `event` in a consumer span that continues the event's trace, if it has one. */
  consume<T>(event: CloudEvent, handle: () => Promise<T>): Promise<T>;
  /** Exports what is buffered and stops (SIGTERM path). */
  shutdown(): Promise<void>;
}

const off: Tracing = {
  enabled: false,
  eventContext: () => ({}),
  consume: (_event, handle) => handle(),
  shutdown: async () => {},
};

let current: Tracing = off;

export const tracing = (): Tracing => current;

export function setTracing(t: Tracing | undefined): void {
  current = t ?? off;
}
