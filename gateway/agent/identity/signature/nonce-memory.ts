import type { NonceStore } from './nonce-store.ts';
import { NonceStoreFull } from './nonce-store.ts';

/**
 * Bounded, and never by forgetting a live nonce (that would reopen the replay it guards):
 * when full, expired entries are swept; if all are live, the request is refused. Only
 * verified signatures reach the store, so only registered agents can fill it, and at most
 * rate × validity of them each (e.g. 10/s × 330 s = 3,300 per agent).
 */
export function memoryNonceStore(maxEntries = 100_000): NonceStore {
  const until = new Map<string, number>();
  const sweep = (now: number) => {
    for (const [k, t] of until) if (t <= now) until.delete(k);
  };
  return {
    async remember(keyid, nonce, untilMs, now) {
      const k = `${keyid} ${nonce}`;
      const known = until.get(k);
      if (known !== undefined && known > now) return false;
      if (known === undefined && until.size >= maxEntries) {
        sweep(now);
        if (until.size >= maxEntries) throw new NonceStoreFull('too many live signature nonces');
      }
      until.set(k, untilMs);
      return true;
    },
  };
}
