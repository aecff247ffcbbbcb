import { Histogram, type Registry } from 'prom-client';

/** How often the loop is sampled; a sample's delay is how late its timer fired. */
const SAMPLE_EVERY_MS = 10;

/**
 * The event-loop delay as a Prometheus histogram (`nodejs_eventloop_delay_seconds`), so a
 * dashboard can show its distribution over any window and alert on the share of slow turns.
 * prom-client's default metrics export `nodejs_eventloop_lag_p99_seconds` and friends, read from
 * `perf_hooks.monitorEventLoopDelay`: percentiles since the process started, which cannot be
 * aggregated across replicas or narrowed to the last minute. This samples the loop the same way
 * monitorEventLoopDelay does (a timer, and how late it fires) and counts each sample into
 * buckets from 1 ms to 1 s. Cost: one unreferenced timer every 10 ms.
 */
export function collectEventLoopDelay(registry: Registry): () => void {
  const histogram = new Histogram({
    name: 'nodejs_eventloop_delay_seconds',
    help: `Event-loop delay: how late a ${SAMPLE_EVERY_MS} ms timer fired, sampled every ${SAMPLE_EVERY_MS} ms.`,
    buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
    registers: [registry],
  });
  let due = performance.now() + SAMPLE_EVERY_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    histogram.observe(Math.max(0, now - due) / 1000);
    due = now + SAMPLE_EVERY_MS;
  }, SAMPLE_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
