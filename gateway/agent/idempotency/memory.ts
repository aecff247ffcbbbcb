import { BoundedMap } from '../../../lib/bounded-map.ts';
import { decide, type IdempotencyRecord, type IdempotencyStore, type IdempotencyTimes } from './store.ts';

export function memoryIdempotencyStore(times: IdempotencyTimes, maxEntries = 100_000): IdempotencyStore {
  const records = new BoundedMap<string, IdempotencyRecord>(maxEntries);
  return {
    async begin(key, fingerprint, now) {
      const result = decide(records.get(key), fingerprint, now);
      if (result.kind === 'started') records.set(key, { fp: fingerprint, exp: now + times.inFlightMs });
      return result;
    },
    async complete(key, fingerprint, reply, now) {
      records.set(key, { fp: fingerprint, exp: now + times.ttlMs, reply });
    },
    async release(key) {
      records.delete(key);
    },
  };
}
