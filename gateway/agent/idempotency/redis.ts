import type { RedisClient } from '../../../lib/redis.ts';
import { luaScript } from '../../../lib/redis-lua.ts';
import { decide, type IdempotencyRecord, type IdempotencyStore, type IdempotencyTimes } from './store.ts';

// Read the record and, when the key is free, claim it: one atomic step, so two replicas that
// receive the same key at once cannot both start the call. Expiry is judged by store.decide
// on the caller's clock; PX only collects old records.
const BEGIN = `
local v = redis.call('GET', KEYS[1])
if v then
  local rec = cjson.decode(v)
  if tonumber(rec.exp) > tonumber(ARGV[3]) then return v end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

export function redisIdempotencyStore(
  redis: RedisClient,
  prefix: string,
  times: IdempotencyTimes,
): IdempotencyStore {
  const begin = luaScript(redis, 'acAgentIdempotencyBegin', 1, BEGIN);
  const k = (key: string) => `${prefix}agent:idem:{${key}}`;
  return {
    async begin(key, fingerprint, now) {
      const claim: IdempotencyRecord = { fp: fingerprint, exp: now + times.inFlightMs };
      const found = (await begin([k(key)], [JSON.stringify(claim), times.inFlightMs, now])) as string | null;
      if (found === null) return { kind: 'started' };
      return decide(JSON.parse(found) as IdempotencyRecord, fingerprint, now);
    },
    async complete(key, fingerprint, reply, now) {
      const record: IdempotencyRecord = { fp: fingerprint, exp: now + times.ttlMs, reply };
      await redis.set(k(key), JSON.stringify(record), 'PX', times.ttlMs);
    },
    async release(key) {
      await redis.del(k(key));
    },
  };
}
