import { performance } from 'node:perf_hooks';

/** What the shedding reads of the event loop at a request (lib/http/shed.ts). */
export interface LoopPressure {
  /** How long the loop has been busy, without once waiting for I/O, up to now (ms). */
  readonly stretch: number;
  /** The share of the last one to two windows (`windowMs`) the loop was busy, 0–1. */
  readonly utilisation: number;
}

/**
 * A reader of the event loop's busy stretch and recent utilisation. Written here: Node offers
 * the loop's utilisation and its delay between turns, not the length of the busy stretch a
 * request is read in, and no library computes it.
 *
 * libuv counts the loop's idle time only while it blocks in its poll, and a poll that finds
 * sockets ready does not block: under a standing queue no idle time accrues at all. A request
 * whose bytes came while the loop was idle woke it, so a request handled now arrived at or after
 * the start of the current busy stretch: the stretch bounds how long it has waited since it
 * arrived, its time in the socket's buffer included, which the loop's delay (timers between
 * turns) does not see (docs/performance.md, "Shedding on the loop's busy stretch").
 *
 * `performance.eventLoopUtilization()` gives both: `active` is live (now less the start less the
 * idle time) and `idle` is libuv's counter. When the idle time moved since the last reading, the
 * stretch began after that reading, and it is counted from it: an over-estimate by the busy time
 * between that reading and the wait, which a reader called for every request keeps small. The
 * utilisation is over the previous whole window and the current part of one, and at least the
 * share of a window the stretch covers.
 */
export function loopPressure(windowMs: number): () => LoopPressure {
  let { idle, active } = performance.eventLoopUtilization();
  let from = active;
  // The window's start (idle and active then) and the previous window's start.
  let mark = { idle, active };
  let before = mark;
  return () => {
    const now = performance.eventLoopUtilization();
    if (now.idle !== idle) {
      idle = now.idle;
      from = active;
    }
    active = now.active;
    if (now.idle + now.active - (mark.idle + mark.active) >= windowMs) {
      before = mark;
      mark = { idle: now.idle, active: now.active };
    }
    const busy = now.active - before.active;
    const all = busy + now.idle - before.idle;
    const stretch = active - from;
    // The stretch was all busy: with readings far apart (a loop held, no request read) the windows
    // are stale, and the last `windowMs` were at least stretch ÷ windowMs busy.
    return { stretch, utilisation: Math.min(1, Math.max(all > 0 ? busy / all : 0, stretch / windowMs)) };
  };
}

/**
 * A stretch over the budget sheds only where the loop was busy for at least this share of the
 * last 500–1,000 ms: a queue that stands, in CoDel's sense (a delay above its target that lasts an
 * interval; Nichols and Jacobson, 2012), not one stretch after a pause. At half the maximum, in
 * some starts, stretches of 30–96 ms came every few hundred ms while the loop was busy for less
 * than 90 % of the last half second: with the last 100–200 ms as the window, 0.6–1.9 % of those
 * starts' quotes were shed at half the maximum; with 500–1,000 ms none, and the accepted quotes'
 * p99 at 150 % the same (docs/performance.md, "Shedding on the loop's busy stretch").
 */
export const STANDING_UTILISATION = 0.9;
export const STANDING_WINDOW_MS = 500;

/** Whether a request read now has waited longer than `budgetMs` in a queue that stands. */
export function standingOver(loop: LoopPressure, budgetMs: number): boolean {
  return budgetMs > 0 && loop.stretch > budgetMs && loop.utilisation >= STANDING_UTILISATION;
}
