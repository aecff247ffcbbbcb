import { BoundedMap } from '../../../lib/bounded-map.ts';
import { callsInWindow, IDLE_TTL_MS, MAX_IDENTITIES, pageOf, second, WINDOW_SECONDS } from './activity.ts';
import type { ActivityStore } from './store.ts';

interface Tally {
  first: number;
  last: number;
  /** Calls per epoch second, the last WINDOW_SECONDS only. */
  perSecond: Map<number, number>;
}

export function memoryActivityStore(maxIdentities = MAX_IDENTITIES): ActivityStore {
  const tallies = new BoundedMap<string, Tally>(maxIdentities);
  return {
    record(identity, at) {
      const t = tallies.get(identity) ?? { first: at, last: at, perSecond: new Map() };
      // Re-inserted so the bounded map forgets the least recently seen identity, not the oldest.
      tallies.delete(identity);
      tallies.set(identity, t);
      t.first = Math.min(t.first, at);
      t.last = Math.max(t.last, at);
      const s = second(at);
      t.perSecond.set(s, (t.perSecond.get(s) ?? 0) + 1);
      if (t.perSecond.size > WINDOW_SECONDS + 5)
        for (const old of t.perSecond.keys())
          if (old <= second(t.last) - WINDOW_SECONDS) t.perSecond.delete(old);
    },
    async flush() {},
    async page(now, limit, after) {
      for (const [identity, t] of tallies) if (t.last <= now - IDLE_TTL_MS) tallies.delete(identity);
      const index = [...tallies].map(([identity, t]) => ({ identity, lastSeen: t.last }));
      const { page, next } = pageOf(index, limit, after);
      const items = page.map(({ identity }) => {
        const t = tallies.get(identity) as Tally;
        return {
          identity,
          firstSeen: t.first,
          lastSeen: t.last,
          callsLastMinute: callsInWindow(t.perSecond, now),
        };
      });
      return { items, next, total: index.length };
    },
    async close() {},
  };
}
