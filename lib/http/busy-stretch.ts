import { performance } from 'node:perf_hooks';

/** What the shedding reads of the event loop at a request (lib/http/shed.ts). */
export interface LoopPressure {
  /** How long the loop has been busy, without once waiting for I/O, up to now (ms). */
  readonly stretch: number;
  /** Since the check phase two turns of the loop ago (ms; Infinity before two turns). */
  readonly turns: number;
  /** The share of the last one to two windows (`windowMs`) the loop was busy, 0–1. */
  readonly utilisation: number;
}

/**
 * A reader of two upper bounds on how long a request read now has waited since its bytes
 * arrived, its time in the socket's buffer included, which the loop's delay (timers between
 * turns) does not see; and of the loop's recent utilisation. Written here: Node offers the loop's
 * utilisation and its delay between turns, neither bound, and no library computes them
 * (docs/performance.md, "Shedding on the loop's busy stretch").
 *
 * - *The busy stretch.* libuv counts the loop's idle time only while it blocks in its poll, and
 *   a poll that finds sockets ready does not block. A request whose bytes came while the loop was
 *   idle woke it, so a request read now arrived at or after the start of the current busy stretch.
 *   `performance.eventLoopUtilization()` gives it: `active` is live (now less the start less the
 *   idle time), `idle` libuv's counter. When the idle time moved since the last reading, the
 *   stretch began after that reading and is counted from it: an over-estimate by the busy time
 *   between that reading and the wait, which readings at every request and every 10 ms keep small.
 * - *Two turns.* A loop kept busy by a few callers that each wait for their answer (a closed
 *   loop) never idles while each request waits a few ms: the stretch alone shed 92 % of such a
 *   load. A request read in a turn's poll was not readable at the previous turn's poll (its socket
 *   would have been read then), which came after the check phase of the turn before: so it waited
 *   at most the time since that check phase. A `setImmediate` per turn that reads a request records
 *   when each check phase ran. (A new connection waiting in the accept queue is not bounded by it;
 *   lib/http/accept.ts shortens that queue.)
 *
 * The utilisation is over the previous whole window and the current part of one, and at least the
 * share of a window the current stretch covers.
 */
export function loopPressure(windowMs: number): LoopReader {
  let { idle, active } = performance.eventLoopUtilization();
  let from = active;
  // The window's start (idle and active then) and the previous window's start.
  let mark = { idle, active };
  let before = mark;
  // The check phases of the last two turns that read a request.
  let checked = Number.NEGATIVE_INFINITY;
  let checkedBefore = Number.NEGATIVE_INFINITY;
  let pending = false;
  const onCheck = () => {
    pending = false;
    checkedBefore = checked;
    checked = performance.now();
  };
  /** Follows the loop's counters: where the stretch started, the utilisation's windows. */
  const follow = () => {
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
    return now;
  };
  // Readings between requests: without them a request after a quiet spell counted from the
  // reading of the request before it, busy time from before the loop last waited included (a
  // quote after 600 ms of another route's work and 100 ms idle read a 600 ms stretch).
  const timer = setInterval(follow, FOLLOW_MS);
  timer.unref();
  return {
    read() {
      if (!pending) {
        pending = true;
        setImmediate(onCheck);
      }
      const turns = performance.now() - checkedBefore;
      const now = follow();
      const busy = now.active - before.active;
      const all = busy + now.idle - before.idle;
      const stretch = active - from;
      // The last `stretch` ms were all busy: after a stretch longer than the timer's period (the
      // timer cannot fire in it) the windows reach back before it, to idle time it outlasted.
      return {
        stretch,
        turns,
        utilisation: Math.min(1, Math.max(all > 0 ? busy / all : 0, stretch / windowMs)),
      };
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * How often the reader follows the loop's counters between requests (ms): the stretch's
 * over-estimate is at most the busy time of one such period, and the utilisation's windows roll
 * even while no request is read. A timer that cannot fire while the loop is busy fires first
 * thing after, before the poll reads the requests that waited.
 */
const FOLLOW_MS = 10;

/** Reads the loop's pressure at a request; `stop` ends its timer. */
export interface LoopReader {
  read(): LoopPressure;
  stop(): void;
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

/** Whether a request read now has waited (by the tighter bound) longer than `budgetMs` in a queue that stands. */
export function standingOver(loop: LoopPressure, budgetMs: number): boolean {
  return (
    budgetMs > 0 && Math.min(loop.stretch, loop.turns) > budgetMs && loop.utilisation >= STANDING_UTILISATION
  );
}
