import { createHash } from 'node:crypto';
import type { RedisClient } from '../../../../lib/redis.ts';
import { luaScript } from '../../../../lib/redis-lua.ts';
import type { NonceStore } from './nonce-store.ts';

// Check and claim in one atomic step, so the same nonce sent to two replicas at once is
// accepted by one only. The stored value is the caller's "until": expiry is judged on the
// injectable clock; PX (until − now, at least 1 ms) only collects the key afterwards.
const REMEMBER = `
local v = redis.call('GET', KEYS[1])
if v and tonumber(v) > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

/**
 * One key per (key id, nonce), no hash tag needed: every command touches that one key, so it
 * runs on Redis Cluster, and one agent's nonces spread over all shards. The nonce is hashed
 * so its length (up to 256 characters) does not set the key's.
 */
export function redisNonceStore(redis: RedisClient, prefix: string): NonceStore {
  const remember = luaScript(redis, 'acAgentSignatureNonce', 1, REMEMBER);
  const k = (keyid: string, nonce: string) =>
    `${prefix}agent:nonce:${keyid}:${createHash('sha256').update(nonce).digest('base64url')}`;
  return {
    async remember(keyid, nonce, untilMs, now) {
      const ttl = Math.max(1, Math.ceil(untilMs - now));
      return (await remember([k(keyid, nonce)], [untilMs, now, ttl])) === 1;
    },
  };
}
