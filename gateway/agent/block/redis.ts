import type { RedisClient } from '../../../lib/redis.ts';
import { luaScript } from '../../../lib/redis-lua.ts';
import type { BlockPolicy, BlockState } from './policy.ts';
import type { BlockStore } from './store.ts';

// The same transition as policy.afterError, atomically in Redis (one hash per identity), so
// concurrent errors on several replicas count once each. Times come from the caller's clock
// (testable expiry); PEXPIRE only collects old keys.
const RECORD_ERROR = `
local blockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local now = tonumber(ARGV[1])
if blockedUntil > now then
  return {redis.call('HGET', KEYS[1], 'count') or '0', tostring(blockedUntil)}
end
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
if count > tonumber(ARGV[2]) then
  blockedUntil = now + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'count', 0, 'until', blockedUntil)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'0', tostring(blockedUntil)}
end
redis.call('HSET', KEYS[1], 'until', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {tostring(count), '0'}
`;

/** Consecutive counts are kept this long (real time) after the last error. */
const COUNT_TTL_MS = 24 * 3600_000;

export function redisBlockStore(redis: RedisClient, prefix: string, policy: BlockPolicy): BlockStore {
  const recordError = luaScript(redis, 'acAgentBlockRecordError', 1, RECORD_ERROR);
  const key = (identity: string) => `${prefix}agent:block:{${identity}}`;
  const state = (count: unknown, until: unknown): BlockState => ({
    count: Number(count ?? 0) || 0,
    until: Number(until ?? 0) || 0,
  });
  return {
    async get(identity) {
      const [count, until] = await redis.hmget(key(identity), 'count', 'until');
      return state(count, until);
    },
    async recordError(identity, now) {
      const [count, until] = (await recordError(
        [key(identity)],
        [now, policy.maxConsecutiveErrors, policy.blockMs, COUNT_TTL_MS],
      )) as [string, string];
      return state(count, until);
    },
    async reset(identity) {
      await redis.hset(key(identity), 'count', 0);
    },
    async clear(identity) {
      // One key: MULTI is atomic on a Cluster node too, so no error slips between read and delete.
      const r = await redis.multi().hmget(key(identity), 'count', 'until').del(key(identity)).exec();
      const [err, values] = r?.[0] ?? [new Error('unblock: no reply from Redis'), null];
      if (err) throw err;
      const [count, until] = values as [string | null, string | null];
      return state(count, until);
    },
  };
}
