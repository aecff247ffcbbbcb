import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { CheckoutSession } from './session.ts';
import type { CheckoutSessionStore } from './store.ts';

/**
 * The session store with the sessions it wrote or read kept in memory, for a database this
 * process alone writes (the embedded PGlite): a step of a session then reads no row, and every
 * write still goes to the table first (a restart reads them back). With replicas (PostgreSQL)
 * another process may have changed a session, so the plain store is used there.
 */
export function cachedSessionStore(inner: CheckoutSessionStore, max = 10_000): CheckoutSessionStore {
  const sessions = new BoundedMap<string, CheckoutSession>(max);
  return {
    async insert(s) {
      const ok = await inner.insert(s);
      if (ok) sessions.set(s.id, s);
      return ok;
    },
    async get(id) {
      const known = sessions.get(id);
      if (known) return known;
      const s = await inner.get(id);
      if (s) sessions.set(id, s);
      return s;
    },
    async replace(next) {
      const ok = await inner.replace(next);
      if (ok) sessions.set(next.id, next);
      else sessions.delete(next.id);
      return ok;
    },
    list: (q) => inner.list(q),
  };
}
