/**
 * A class's concurrency limit with a bounded queue (lib/http/gate.ts, issue 48): places up to the
 * limit at once, then first in first out within the budget, refused after it.
 */
import { describe, expect, it } from 'vitest';
import { createGate } from '../../lib/http/gate.ts';
import { remainingBudget } from '../../lib/http/shed.ts';

describe('the concurrency gate', () => {
  it('lets up to the limit in at once, without waiting', () => {
    const g = createGate(2);
    expect(g.enter(10)).toBe(true);
    expect(g.enter(10)).toBe(true);
    expect(g.running).toBe(2);
  });

  it('gives a freed place to the first in line, within its budget', async () => {
    const g = createGate(1);
    expect(g.enter(0)).toBe(true);
    const first = g.enter(1000);
    const second = g.enter(1000);
    g.leave();
    await expect(first).resolves.toBe(true);
    g.leave();
    await expect(second).resolves.toBe(true);
    expect(g.running).toBe(1);
  });

  it('refuses one that did not start within its budget, and forgets it', async () => {
    const g = createGate(1);
    g.enter(0);
    const started = performance.now();
    await expect(g.enter(20)).resolves.toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    // The refused one holds no place and is not in line: the next freed place is nobody's.
    g.leave();
    expect(g.running).toBe(0);
    expect(g.enter(0)).toBe(true);
  });

  it('refuses at once with no budget to wait', () => {
    const g = createGate(1);
    g.enter(0);
    expect(g.enter(0)).toBe(false);
  });
});

describe('the queue-time budget left at the gate', () => {
  it('is the budget less the wait before the first hook (the loop delay)', () => {
    expect(remainingBudget(30, 0, 50)).toBe(30);
    expect(remainingBudget(30, 25, 50)).toBe(5);
    expect(remainingBudget(30, 45, 50)).toBe(0);
    // A window without a sample: the loop was blocked for all of it.
    expect(remainingBudget(100, Number.POSITIVE_INFINITY, 50)).toBe(50);
    expect(remainingBudget(0, 5, 50)).toBe(0);
  });

  it('so a request that arrived late waits only the rest of its budget for a place', async () => {
    const g = createGate(1);
    g.enter(0);
    const started = performance.now();
    await expect(g.enter(remainingBudget(200, 190, 50))).resolves.toBe(false);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
