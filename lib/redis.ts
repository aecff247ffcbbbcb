import { Cluster, Redis } from 'ioredis';
import type { Config } from './config.ts';

export type RedisClient = Redis | Cluster;

/** One Redis connection (or cluster client) with bounded retries, so a dead Redis fails fast. */
export function createRedis(config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER'>): RedisClient {
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set');
  const options = { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2000 } as const;
  if (config.REDIS_CLUSTER) {
    const u = new URL(config.REDIS_URL);
    return new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], { redisOptions: options });
  }
  return new Redis(config.REDIS_URL, options);
}
