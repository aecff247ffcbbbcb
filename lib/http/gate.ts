/**
 * A class's concurrency limit with a bounded queue (issue 48): at most `limit` requests of the
 * class run at once; a request that finds none free waits first in first out, and one that has
 * not started within its budget is refused (the caller answers 503). The event loop's delay
 * (lib/http/shed.ts) says how late the loop runs; it does not see requests that each take many
 * turns of a loop shared by hundreds (measured at 150 % of the maximum: accepted p99s of seconds
 * with 70 % shed), nor the distributed gateway's requests waiting on subgraph processes. A bound
 * on those in flight bounds their wait by Little's law. The limit is read at each decision, so
 * it may move (lib/http/adaptive-limit.ts: it follows the class's measured service time).
 */
export interface Gate {
  /** Resolves true once the request may start, false if it could not within `budgetMs`. */
  enter(budgetMs: number): Promise<boolean> | boolean;
  /** A started request finished (or was aborted): its place goes to the next in line. */
  leave(): void;
  readonly running: number;
}

export function createGate(limitOf: number | (() => number)): Gate {
  const limit = typeof limitOf === 'number' ? () => limitOf : limitOf;
  let running = 0;
  const waiting: { start(): void }[] = [];
  return {
    get running() {
      return running;
    },
    enter(budgetMs) {
      if (running < limit()) {
        running++;
        return true;
      }
      if (budgetMs <= 0) return false;
      return new Promise<boolean>((resolve) => {
        const waiter = {
          start: () => {
            clearTimeout(timer);
            running++;
            resolve(true);
          },
        };
        const timer = setTimeout(() => {
          const i = waiting.indexOf(waiter);
          if (i >= 0) waiting.splice(i, 1);
          resolve(false);
        }, budgetMs);
        waiting.push(waiter);
      });
    },
    leave() {
      running = Math.max(0, running - 1);
      // A limit that grew lets more than one in; one that shrank lets none until it is met.
      while (running < limit() && waiting.length > 0) waiting.shift()?.start();
    },
  };
}
