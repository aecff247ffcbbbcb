import { BoundedMap } from '../../../lib/bounded-map.ts';
import { callsInWindow, countCall, IDLE_TTL_MS, MAX_IDENTITIES, pageOf, type Tally } from './activity.ts';
import type { ActivityStore } from './store.ts';

export function memoryActivityStore(maxIdentities = MAX_IDENTITIES): ActivityStore {
  const tallies = new BoundedMap<string, Tally>(maxIdentities);
  return {
    record(identity, at) {
      const t = tallies.get(identity) ?? { first: at, last: at, perSecond: new Map() };
      // Re-inserted so the bounded map forgets the least recently seen identity, not the oldest.
      tallies.delete(identity);
      tallies.set(identity, t);
      countCall(t, at);
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
