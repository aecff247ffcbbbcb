/**
 * The adaptive concurrency limit and queue-time budget (lib/http/adaptive-limit.ts, issue 48),
 * on a fake clock and made-up service times: deterministic, nothing timed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AdaptiveLimitOptions, createAdaptiveLimit } from '../../lib/http/adaptive-limit.ts';
import { createGate } from '../../lib/http/gate.ts';

const OPTIONS: AdaptiveLimitOptions = {
  initial: 64,
  min: 4,
  max: 64,
  tolerance: 2,
  budgetFactor: 4,
  budgetFloorMs: 2,
  budgetCeilingMs: 30,
  windowMs: 50,
  minSamples: 20,
};

/** Feeds `windows` windows of `perWindow` answers, each taking `service(i)` ms, with `inFlight` running. */
function feed(
  l: ReturnType<typeof createAdaptiveLimit>,
  clock: { now: number },
  windows: number,
  service: number | ((i: number) => number),
  inFlight: number | (() => number),
  perWindow = 40,
) {
  const serviceOf = typeof service === 'number' ? () => service : service;
  const inFlightNow = typeof inFlight === 'number' ? () => inFlight : inFlight;
  // A window starts with its first answer and closes with the one `windowMs` later: here its last.
  const step = (OPTIONS.windowMs + 0.01) / (perWindow - 1);
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < perWindow; i++) {
      if (i > 0) clock.now += step;
      l.record(clock.now, serviceOf(i), inFlightNow());
    }
    clock.now += step;
  }
}

describe('the adaptive limit', () => {
  it('starts at its initial limit and the budget ceiling, before any window closed', () => {
    const l = createAdaptiveLimit(OPTIONS);
    expect(l.limit).toBe(64);
    expect(l.budgetMs).toBe(30);
    expect(l.baselineMs).toBeUndefined();
    // Fewer than minSamples answers over a long time: still no window.
    for (let i = 0; i < 19; i++) l.record(i * 1000, 1, 1);
    expect(l.baselineMs).toBeUndefined();
  });

  it('takes the baseline from the median service time and the budget as a multiple of it', () => {
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    // Service times 1, 1⅓ … 4 ms, four of each: the median (nearest rank) is 1 + 5/3.
    feed(l, clock, 1, (i) => 1 + (i % 10) / 3, 2);
    expect(l.baselineMs).toBeCloseTo(1 + 5 / 3, 9);
    expect(l.budgetMs).toBeCloseTo(4 * (1 + 5 / 3), 9);
    // Steady, not queueing and not filling the limit: the limit stays.
    feed(l, clock, 20, (i) => 1 + (i % 10) / 3, 2);
    expect(l.limit).toBe(64);
  });

  it('keeps the budget between its floor and its ceiling', () => {
    const fast = createAdaptiveLimit(OPTIONS);
    const slow = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(fast, clock, 3, 0.05, 1);
    feed(slow, clock, 3, 100, 1);
    expect(fast.budgetMs).toBe(2);
    expect(slow.budgetMs).toBe(30);
  });

  it('shrinks when the median service time passes the tolerance, at most by half a window, never below min', () => {
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(l, clock, 5, 1, 8);
    expect(l.limit).toBe(64);
    // Queueing: 10× the baseline. One window halves the limit (not more).
    feed(l, clock, 1, 10, 64);
    expect(l.limit).toBe(32);
    feed(l, clock, 20, 10, 64);
    expect(l.limit).toBe(4);
  });

  it('grows by √limit a window only when the limit was filled and the service time is within tolerance', () => {
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(l, clock, 2, 1, 1);
    feed(l, clock, 20, 10, 64);
    expect(l.limit).toBe(4);
    // Back within tolerance but little demand: it stays.
    feed(l, clock, 5, 1, 1);
    expect(l.limit).toBe(4);
    // Demand fills it: 4 → 6 → 8 …, up to the most.
    feed(l, clock, 1, 1, () => l.limit);
    expect(l.limit).toBe(6);
    feed(l, clock, 100, 1, () => l.limit);
    expect(l.limit).toBe(64);
  });

  it('follows a lower baseline quickly and a higher one slowly (so queueing does not become the baseline)', () => {
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(l, clock, 1, 4, 1);
    expect(l.baselineMs).toBe(4);
    feed(l, clock, 5, 1, 1);
    expect(l.baselineMs).toBeLessThan(1.1);
    // Twenty windows all at 3 ms: the baseline moves less than half the way.
    feed(l, clock, 20, 3, 1);
    expect(l.baselineMs).toBeGreaterThan(1);
    expect(l.baselineMs).toBeLessThan(2);
  });

  it('under overload settles where the service time is within its tolerance, and keeps its baseline', () => {
    // A model: each request waits 1 ms on I/O and costs 0.1 ms of a thread shared by those in
    // flight, so its service time is 1 + 0.1 × running; the gate always full (overload).
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(l, clock, 3, 1.1, 1);
    const limits: number[] = [];
    for (let w = 0; w < 200; w++) {
      feed(
        l,
        clock,
        1,
        () => 1 + 0.1 * l.limit,
        () => l.limit,
      );
      limits.push(l.limit);
    }
    // The queue's times did not become the baseline.
    expect(l.baselineMs).toBeCloseTo(1.1, 6);
    // 1 + 0.1 × L ≤ 2 × 1.1 up to L = 12: the limit hovers there, not at the most or the least.
    const late = limits.slice(100);
    expect(Math.max(...late)).toBeLessThanOrEqual(16);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(6);
    // The budget is a few service times, not the 30 ms ceiling.
    expect(l.budgetMs).toBeCloseTo(4 * 1.1, 6);
  });

  it('keeps its start until a window did not queue (no baseline from an overload met at once)', () => {
    const l = createAdaptiveLimit(OPTIONS);
    const clock = { now: 0 };
    feed(l, clock, 10, 50, 64);
    expect(l.baselineMs).toBeUndefined();
    expect(l.limit).toBe(64);
    expect(l.budgetMs).toBe(30);
  });

  it('whatever the service times, keeps the limit within [min, max] and the budget within [floor, ceiling]', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.double({ min: 0, max: 200, noNaN: true }),
            ms: fc.oneof(fc.double({ min: 0, max: 10_000, noNaN: true }), fc.constant(Number.NaN)),
            inFlight: fc.integer({ min: 0, max: 200 }),
          }),
          { maxLength: 500 },
        ),
        (steps) => {
          const l = createAdaptiveLimit(OPTIONS);
          let now = 0;
          for (const s of steps) {
            now += s.dt;
            l.record(now, s.ms, s.inFlight);
            expect(Number.isInteger(l.limit)).toBe(true);
            expect(l.limit).toBeGreaterThanOrEqual(OPTIONS.min);
            expect(l.limit).toBeLessThanOrEqual(OPTIONS.max);
            expect(l.budgetMs).toBeGreaterThanOrEqual(OPTIONS.budgetFloorMs);
            expect(l.budgetMs).toBeLessThanOrEqual(OPTIONS.budgetCeilingMs);
          }
        },
      ),
    );
  });
  it('never passes a most set below the least', () => {
    const l = createAdaptiveLimit({ ...OPTIONS, initial: 1, max: 1 });
    const clock = { now: 0 };
    feed(l, clock, 2, 1, 0);
    feed(l, clock, 5, 10, 1);
    expect(l.limit).toBe(1);
    feed(l, clock, 5, 1, 1);
    expect(l.limit).toBe(1);
  });
});

describe('a gate on a moving limit', () => {
  it('lets in as many as the limit reads now, and more of those waiting once it grew', async () => {
    let limit = 1;
    const g = createGate(() => limit);
    expect(g.enter(0)).toBe(true);
    expect(g.enter(0)).toBe(false);
    const a = g.enter(1000);
    const b = g.enter(1000);
    limit = 3;
    g.leave();
    await expect(a).resolves.toBe(true);
    await expect(b).resolves.toBe(true);
    expect(g.running).toBe(2);
  });

  it('lets none in after it shrank until those running are within it', () => {
    let limit = 3;
    const g = createGate(() => limit);
    for (let i = 0; i < 3; i++) expect(g.enter(0)).toBe(true);
    limit = 1;
    g.leave();
    expect(g.enter(0)).toBe(false);
    g.leave();
    expect(g.enter(0)).toBe(false);
    g.leave();
    expect(g.enter(0)).toBe(true);
  });
});
