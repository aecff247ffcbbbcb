import { createHash } from 'node:crypto';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config.ts';

export type RedisClient = Redis | Cluster;

export type RedisSettings = Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER'> &
  Partial<Pick<Config, 'REDIS_CLUSTER_NODES' | 'REDIS_COMMAND_TIMEOUT_MS'>>;

/**
 * One Redis connection (or Redis Cluster client) with bounded retries and a command timeout,
 * so a dead or paused Redis fails fast instead of holding requests: the agent gateway then
 * refuses (fail closed), the edge falls back to other prices.
 *
 * `blocking` is for a connection that waits in XREAD BLOCK (the event reader): no command
 * timeout there (it would cut every wait short), only ioredis' guard against a silent socket.
 *
 * Cluster: REDIS_CLUSTER_NODES (host:port list) or the URL's host are the seeds; the URL's
 * user, password and `rediss` scheme (TLS) apply to every node.
 */
export function createRedis(config: RedisSettings, use: 'commands' | 'blocking' = 'commands'): RedisClient {
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set');
  const u = new URL(config.REDIS_URL);
  const options: RedisOptions = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    ...(use === 'commands'
      ? { commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS ?? 500 }
      : { blockingTimeout: 10_000 }),
  };
  if (!config.REDIS_CLUSTER) return new Redis(config.REDIS_URL, options);

  const seeds = config.REDIS_CLUSTER_NODES?.length
    ? config.REDIS_CLUSTER_NODES.map((n) => {
        const i = n.lastIndexOf(':');
        return { host: n.slice(0, i), port: Number(n.slice(i + 1)) };
      })
    : [{ host: u.hostname, port: Number(u.port || 6379) }];
  const clusterOptions: ClusterOptions = {
    redisOptions: {
      ...options,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      ...(u.protocol.startsWith('rediss') ? { tls: {} } : {}),
    },
    // Writes and reads both go to primaries: the scripts read what they write, atomically.
    scaleReads: 'master',
    slotsRefreshTimeout: 2000,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
  };
  return new Cluster(seeds, clusterOptions);
}

const PLAIN_TAG = /^[^{}]+$/;

/**
 * The Redis Cluster hash tag of an id: keys built with the same tag share a slot, so one script
 * may touch all of them. Redis takes the text between the first `{` and the next `}`, so an id
 * that is empty or holds a brace would cut the tag short (or leave it empty, hashing the whole
 * key): such an id is tagged by its SHA-256 and written in full after the tag, which keeps keys
 * of different ids apart. Ids without braces keep the plain `{id}` form (keys already stored
 * keep their names).
 */
export function slotTag(id: string): string {
  if (PLAIN_TAG.test(id)) return `{${id}}`;
  return `{#${createHash('sha256').update(id).digest('base64url')}}=${id}`;
}

/**
 * Sends a batch of independent commands: one pipeline (one round trip) on a single Redis; on a
 * cluster, concurrent commands instead, because an ioredis pipeline must stay on one node; with
 * `enableAutoPipelining` ioredis still sends them as one write per node. Throws the first error.
 */
export async function sendEach(
  redis: RedisClient,
  commands: readonly (string | number)[][],
): Promise<unknown[]> {
  if (commands.length === 0) return [];
  if (redis.isCluster) {
    return Promise.all(commands.map(([name, ...args]) => redis.call(String(name), ...args)));
  }
  const results = (await redis.pipeline(commands.map((c) => [...c])).exec()) ?? [];
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
