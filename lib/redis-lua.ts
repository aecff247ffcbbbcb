import type { RedisClient } from './redis.ts';

type Arg = string | number;
export type LuaScript = (keys: readonly string[], args: readonly Arg[]) => Promise<unknown>;

/**
 * A Lua script run by SHA (ioredis defineCommand: EVALSHA, falling back to EVAL once), so
 * the hot path sends a 40-byte hash instead of the script. Each script touches one key, so it
 * runs on Redis Cluster too.
 */
export function luaScript(redis: RedisClient, name: string, numberOfKeys: number, lua: string): LuaScript {
  redis.defineCommand(name, { numberOfKeys, lua });
  const command = (redis as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[name];
  if (!command) throw new Error(`could not define Redis script ${name}`);
  return (keys, args) => command.call(redis, ...keys, ...args);
}
