import type { RedisClient } from '../../../lib/redis.ts';
import { luaScript } from '../../../lib/redis-lua.ts';
import { type BucketPolicy, describe, idleTtlMs, refill } from './bucket.ts';
import type { BucketStore } from './store.ts';

// bucket.take in Lua, atomically: two replicas never spend the same token.
const TAKE = `
local cap = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2]) / 1000
local now = tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(s[1])
local at = tonumber(s[2])
if tokens == nil or at == nil then
  tokens = cap
  at = now
elseif now > at then
  tokens = math.min(cap, tokens + (now - at) * perMs)
  at = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {allowed, string.format('%.17g', tokens)}
`;

export function redisBucketStore(redis: RedisClient, prefix: string, policy: BucketPolicy): BucketStore {
  const script = luaScript(redis, 'acAgentBucketTake', 1, TAKE);
  const ttl = idleTtlMs(policy);
  return {
    async take(identity, now) {
      const [allowed, tokens] = (await script(
        [`${prefix}agent:bucket:{${identity}}`],
        [policy.capacity, policy.refillPerSecond, now, ttl],
      )) as [number, string];
      return describe(allowed === 1, Number(tokens), policy);
    },
    async peek(identity, now) {
      // A read only: the same refill arithmetic as the script, applied here, nothing written.
      const [t, at] = await redis.hmget(`${prefix}agent:bucket:{${identity}}`, 't', 'at');
      const s = t === null || at === null ? undefined : { tokens: Number(t), at: Number(at) };
      return refill(s, now, policy).tokens;
    },
  };
}
