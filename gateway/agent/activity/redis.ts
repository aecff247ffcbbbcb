import type { Logger } from '../../../lib/logger.ts';
import type { RedisClient } from '../../../lib/redis.ts';
import { luaScript } from '../../../lib/redis-lua.ts';
import {
  callsInWindow,
  countCall,
  IDLE_TTL_MS,
  MAX_IDENTITIES,
  pageOf,
  type Tally,
  WINDOW_SECONDS,
} from './activity.ts';
import type { ActivityStore } from './store.ts';

/** How long calls are gathered before one pipeline writes them (the agent path never waits). */
const FLUSH_EVERY_MS = 200;

// One hash per identity: first, last, and s<epoch second> → calls. Seconds older than the
// window are dropped once the hash has grown past it, so a hash holds about 60 counters.
const RECORD = `
local k = KEYS[1]
local first = tonumber(ARGV[1])
local last = tonumber(ARGV[2])
local f = tonumber(redis.call('HGET', k, 'first') or '')
if f == nil or first < f then redis.call('HSET', k, 'first', ARGV[1]) end
local l = tonumber(redis.call('HGET', k, 'last') or '')
if l == nil or last > l then redis.call('HSET', k, 'last', ARGV[2]) end
for i = 5, #ARGV, 2 do redis.call('HINCRBY', k, 's' .. ARGV[i], ARGV[i + 1]) end
if redis.call('HLEN', k) > tonumber(ARGV[4]) + 10 then
  local oldest = math.floor(math.max(last, l or 0) / 1000) - tonumber(ARGV[4])
  for _, name in ipairs(redis.call('HKEYS', k)) do
    if string.sub(name, 1, 1) == 's' and tonumber(string.sub(name, 2)) <= oldest then redis.call('HDEL', k, name) end
  end
end
redis.call('PEXPIRE', k, ARGV[3])
return 1
`;

/**
 * Calls are gathered in memory for FLUSH_EVERY_MS (at most MAX_IDENTITIES identities; beyond,
 * calls are dropped and logged) and written in one pipeline: a script per identity hash and the
 * shared index (a sorted set by last seen, trimmed to MAX_IDENTITIES).
 */
export function redisActivityStore(
  redis: RedisClient,
  prefix: string,
  log: Logger,
  maxIdentities = MAX_IDENTITIES,
): ActivityStore {
  const script = luaScript(redis, 'acAgentActivityRecord', 1, RECORD);
  const key = (identity: string) => `${prefix}agent:activity:{${identity}}`;
  const indexKey = `${prefix}agent:activity:index`;
  let pending = new Map<string, Tally>();
  let timer: NodeJS.Timeout | undefined;
  /** At most one write at a time: while Redis is slow or down, calls gather in `pending`. */
  let writing: Promise<void> | undefined;
  let dropped = 0;

  const write = async (batch: Map<string, Tally>) => {
    const writes: Promise<unknown>[] = [];
    for (const [identity, p] of batch) {
      const args: (string | number)[] = [p.first, p.last, IDLE_TTL_MS, WINDOW_SECONDS];
      for (const [s, c] of p.perSecond) args.push(s, c);
      writes.push(script([key(identity)], args));
      // GT: a replica with a late batch never moves an identity's last-seen back.
      writes.push(redis.zadd(indexKey, 'GT', p.last, identity));
    }
    writes.push(redis.zremrangebyrank(indexKey, 0, -(maxIdentities + 1)));
    // Members outlive nothing: an identity whose hash expired leaves the index too.
    const newest = Math.max(...[...batch.values()].map((p) => p.last));
    writes.push(redis.zremrangebyscore(indexKey, '-inf', newest - IDLE_TTL_MS));
    const results = await Promise.allSettled(writes);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) log.error({ err: (failed as PromiseRejectedResult).reason }, 'agent activity not recorded');
  };

  const flushNow = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (writing) await writing;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    writing = write(batch).finally(() => {
      writing = undefined;
    });
    await writing;
  };

  return {
    record(identity, at) {
      let p = pending.get(identity);
      if (!p) {
        if (pending.size >= maxIdentities) {
          if (dropped++ % 1000 === 0) log.warn({ dropped }, 'agent activity buffer full; calls not counted');
          return;
        }
        p = { first: at, last: at, perSecond: new Map() };
        pending.set(identity, p);
      }
      countCall(p, at);
      if (!timer) {
        timer = setTimeout(() => void flushNow(), FLUSH_EVERY_MS);
        timer.unref();
      }
    },
    flush: flushNow,
    async page(now, limit, after) {
      const flat = await redis.zrevrange(indexKey, 0, -1, 'WITHSCORES');
      const index = [];
      for (let i = 0; i + 1 < flat.length; i += 2)
        index.push({ identity: flat[i] as string, lastSeen: Number(flat[i + 1]) });
      const { page, next } = pageOf(index, limit, after);
      const hashes = await Promise.all(page.map((s) => redis.hgetall(key(s.identity))));
      const items = page.map((s, i) => {
        const h = hashes[i] ?? {};
        const counts: [number, number][] = [];
        for (const [f, v] of Object.entries(h))
          if (f.startsWith('s')) counts.push([Number(f.slice(1)), Number(v)]);
        return {
          identity: s.identity,
          firstSeen: Number(h.first ?? s.lastSeen),
          lastSeen: Math.max(s.lastSeen, Number(h.last ?? 0)),
          callsLastMinute: callsInWindow(counts, now),
        };
      });
      return { items, next, total: index.length };
    },
    async close() {
      await flushNow();
    },
  };
}
