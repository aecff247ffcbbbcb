/**
 * The Live page's reading of /metrics (console/src/metrics.ts): request rate, p99 and error
 * rate between two scrapes of the HTTP histogram, on the exposition prom-client really writes.
 */
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { between, parseMetrics } from '../../console/src/metrics.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

function histogram() {
  const registry = new Registry();
  const h = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [registry],
  });
  return { registry, h };
}

describe('reading /metrics for the Live page', () => {
  it('counts requests and 5xx answers over every route but /metrics itself', async () => {
    const { registry, h } = histogram();
    for (let i = 0; i < 7; i++) h.observe({ method: 'POST', route: '/graphql', status: 200 }, 0.003);
    h.observe({ method: 'POST', route: '/v2/orders', status: 503 }, 0.2);
    h.observe({ method: 'GET', route: '/metrics', status: 200 }, 0.001);
    const s = parseMetrics(await registry.metrics());
    expect(s.count).toBe(8);
    expect(s.errors).toBe(1);
    expect(s.buckets.get(Number.POSITIVE_INFINITY)).toBe(8);
    expect(s.buckets.get(0.005)).toBe(7);
  });

  it('gives the rate, the p99 within its bucket and the error share between two scrapes', async () => {
    const { registry, h } = histogram();
    h.observe({ method: 'GET', route: '/a', status: 200 }, 0.7);
    const before = parseMetrics(await registry.metrics());
    for (let i = 0; i < 99; i++) h.observe({ method: 'GET', route: '/a', status: 200 }, 0.002);
    h.observe({ method: 'GET', route: '/a', status: 500 }, 0.04);
    const after = parseMetrics(await registry.metrics());
    const p = between(before, after, 2);
    expect(p.rate).toBe(50);
    expect(p.errorRate).toBeCloseTo(0.01, 10);
    // 99 of 100 answers are in the (1 ms, 2.5 ms] bucket: the 99th percentile is its upper bound.
    expect(p.p99Ms).toBeCloseTo(2.5, 6);
  });

  it('has no p99 and no error rate when nothing was served', async () => {
    const { registry } = histogram();
    const s = parseMetrics(await registry.metrics());
    expect(between(s, s, 2)).toEqual({ rate: 0, p99Ms: null, errorRate: 0 });
  });

  it('ignores what is not the HTTP histogram, and survives any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const s = parseMetrics(text);
        expect(Number.isFinite(s.count)).toBe(true);
      }),
    );
    expect(parseMetrics('# HELP x\nnodejs_heap_bytes 12\n').count).toBe(0);
  });

  it('puts the p99 between the bounds of the bucket that holds it, for any traffic', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 1, maxLength: 60 }),
        async (durations) => {
          const { registry, h } = histogram();
          const before = parseMetrics(await registry.metrics());
          for (const d of durations) h.observe({ method: 'GET', route: '/a', status: 200 }, d);
          const p = between(before, parseMetrics(await registry.metrics()), 1);
          const sorted = [...durations].sort((a, b) => a - b);
          const exact = sorted[Math.ceil(0.99 * sorted.length) - 1] as number;
          const upper = BUCKETS.find((b) => exact <= b) ?? 1;
          const lower = [...BUCKETS].reverse().find((b) => b < exact) ?? 0;
          expect(p.rate).toBe(durations.length);
          expect(p.p99Ms).not.toBeNull();
          expect(p.p99Ms as number).toBeGreaterThanOrEqual(lower * 1000 - 1e-9);
          expect(p.p99Ms as number).toBeLessThanOrEqual(upper * 1000 + 1e-9);
        },
      ),
      { numRuns: 100 },
    );
  });
});
