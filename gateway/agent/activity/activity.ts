/**
 * Who has been calling the agent gateway (the operator's agents list, issue 14): per verified
 * identity, when it was first and last seen and how many calls it made in the last minute.
 * Fed by the audit log as entries are appended (every agent call, refused ones included), so
 * "seen" means exactly "audited". Pure arithmetic shared by the memory and Redis adapters.
 */
export const WINDOW_SECONDS = 60;
/** Identities kept; the least recently seen goes first (sub-identities are unlimited). */
export const MAX_IDENTITIES = 10_000;
/** An identity unseen this long is forgotten (its first-seen time with it). */
export const IDLE_TTL_MS = 7 * 24 * 3600_000;

export interface AgentActivity {
  readonly identity: string;
  /** Epoch ms. */
  readonly firstSeen: number;
  readonly lastSeen: number;
  /** Calls in the last WINDOW_SECONDS whole seconds, the current one included. */
  readonly callsLastMinute: number;
}

/** Where a page ends: the list is ordered by last seen (newest first), then identity. */
export interface ActivityCursor {
  readonly lastSeen: number;
  readonly identity: string;
}

export interface Seen {
  readonly identity: string;
  readonly lastSeen: number;
}

export const second = (ms: number): number => Math.floor(ms / 1000);

/** One identity's calls: first and last seen, and counts per epoch second. */
export interface Tally {
  first: number;
  last: number;
  /** Calls per epoch second, the last WINDOW_SECONDS only. */
  perSecond: Map<number, number>;
}

/**
 * Counts one call at `at`. Seconds that have left the window are dropped, so a tally never
 * grows past the window, however long it is kept (an identity that keeps calling, a Redis
 * outage holding a pending tally).
 */
export function countCall(t: Tally, at: number): void {
  t.first = Math.min(t.first, at);
  t.last = Math.max(t.last, at);
  const s = second(at);
  t.perSecond.set(s, (t.perSecond.get(s) ?? 0) + 1);
  if (t.perSecond.size > WINDOW_SECONDS + 5)
    for (const old of t.perSecond.keys()) if (old <= second(t.last) - WINDOW_SECONDS) t.perSecond.delete(old);
}

export const newestFirst = (a: Seen, b: Seen): number =>
  b.lastSeen - a.lastSeen || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0);

/**
 * One page of the index after the cursor (keyset pagination: an identity seen again while an
 * operator pages moves to the front instead of shifting every later page by one).
 */
export function pageOf(
  index: readonly Seen[],
  limit: number,
  after?: ActivityCursor,
): { page: Seen[]; next: ActivityCursor | undefined } {
  const sorted = [...index].sort(newestFirst);
  const start = after ? sorted.findIndex((s) => newestFirst(s, after) > 0) : 0;
  const page = start < 0 ? [] : sorted.slice(start, start + limit);
  const last = page[page.length - 1];
  const more = start >= 0 && start + limit < sorted.length;
  return { page, next: more && last ? { lastSeen: last.lastSeen, identity: last.identity } : undefined };
}

/** Calls in the window ending at `now`, from counts per epoch second. */
export function callsInWindow(counts: Iterable<readonly [number, number]>, now: number): number {
  const newest = second(now);
  let n = 0;
  for (const [s, c] of counts) if (s > newest - WINDOW_SECONDS && s <= newest) n += c;
  return n;
}
