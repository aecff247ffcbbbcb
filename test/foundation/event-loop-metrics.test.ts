import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { collectEventLoopDelay } from '../../lib/event-loop-metrics.ts';

interface Bucket {
  labels: { le?: number | string };
  value: number;
  metricName?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Holds the event loop, as a long synchronous task would. */
function block(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else may run
  }
}

let stop: (() => void) | undefined;
afterEach(() => stop?.());

async function buckets(registry: Registry) {
  const [metric] = (await registry.getMetricsAsJSON()) as unknown as { values: Bucket[] }[];
  const values = metric?.values ?? [];
  const at = (le: number | string) =>
    values.find((v) => v.metricName?.endsWith('_bucket') && String(v.labels.le) === String(le))?.value ?? 0;
  const count = values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  return { at, count };
}

describe('the event-loop delay histogram (nodejs_eventloop_delay_seconds)', () => {
  it('counts a turn that held the loop for 80 ms in a bucket above 50 ms', async () => {
    const registry = new Registry();
    stop = collectEventLoopDelay(registry);
    await sleep(35); // a few quiet samples first
    block(80);
    await sleep(25); // the late timer fires, then one more on time
    const { at, count } = await buckets(registry);
    expect(count).toBeGreaterThanOrEqual(3);
    expect(count - at(0.05)).toBeGreaterThanOrEqual(1); // the blocked turn: over 50 ms late
  });

  it('stops sampling when closed', async () => {
    const registry = new Registry();
    const close = collectEventLoopDelay(registry);
    await sleep(35);
    close();
    const before = (await buckets(registry)).count;
    await sleep(40);
    expect((await buckets(registry)).count).toBe(before);
  });
});
