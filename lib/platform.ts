import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { type Db, openDb } from './db/index.ts';
import { collectEventLoopDelay } from './event-loop-metrics.ts';
import type { EventBus } from './events/bus.ts';
import { createMemoryBus } from './events/memory.ts';
import { createRedisStreamsBus } from './events/redis-streams.ts';
import { createLogger, type Logger } from './logger.ts';
import { createRedis, type RedisClient } from './redis.ts';

/**
 * What every service is built from: configuration, logs, metrics, time, the SQL store, the
 * event bus and (distributed topology) Redis. Services receive it; they never open their own.
 */
export interface Platform {
  readonly config: Config;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly db: Db;
  readonly bus: EventBus;
  /** Present when REDIS_URL is set: shared state for every replica. */
  readonly redis?: RedisClient;
  /** Dependency checks for /readyz, by name. */
  readonly readiness: Map<string, () => Promise<void>>;
  /** Closed in reverse order of registration on shutdown. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface PlatformOptions {
  /** CloudEvents `source` and log name: `/agent-commerce/pricing`, … */
  service: string;
  clock?: Clock;
  db?: Db;
}

export async function createPlatform(config: Config, opts: PlatformOptions): Promise<Platform> {
  const log = createLogger(config, opts.service);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const closers: (() => Promise<void> | void)[] = [collectEventLoopDelay(metrics)];
  const readiness = new Map<string, () => Promise<void>>();

  const db = opts.db ?? (await openDb(config));
  if (!opts.db) closers.push(() => db.close());
  if (db.madeFrom) log.info({ madeFrom: db.madeFrom }, 'embedded store made');
  if (db.kind === 'pglite' && config.EMBEDDED_DB === 'disk' && config.EMBEDDED_DB_FSYNC === 'off')
    log.warn(
      'EMBEDDED_DB_FSYNC=off: the embedded store does not sync its writes; a power loss or an operating-system crash can lose acknowledged orders and corrupt DATA_DIR (docs/deployment.md, "What survives what")',
    );
  readiness.set('db', () => db.ping());

  let redis: RedisClient | undefined;
  let bus: EventBus;
  const source = `/agent-commerce/${opts.service}`;
  const onBusError = (err: unknown) => log.error({ err }, 'event handler failed');
  if (config.REDIS_URL) {
    redis = createRedis(config);
    const reader = createRedis(config, 'blocking');
    readiness.set('redis', async () => {
      await redis?.ping();
    });
    const streams = createRedisStreamsBus({
      source,
      stream: `${config.REDIS_KEY_PREFIX}events`,
      publisher: redis,
      reader,
      onError: onBusError,
    });
    await streams.ready;
    bus = streams;
    closers.push(() => {
      redis?.disconnect();
    });
  } else {
    bus = createMemoryBus(source, onBusError);
  }
  closers.push(() => bus.close());

  exportReachability(metrics, readiness, config);

  return {
    config,
    log,
    clock: opts.clock ?? systemClock,
    metrics,
    db,
    bus,
    ...(redis ? { redis } : {}),
    readiness,
    onClose: (fn) => closers.push(fn),
    async close() {
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          log.warn({ err }, 'error while closing');
        }
      }
    },
  };
}

/** How long a scrape waits for one dependency before it counts as unreachable. */
const REACH_TIMEOUT_MS = 1000;

/**
 * `dependency_up{dependency}`: whether the process reached its SQL store and Redis on this
 * scrape (the readiness checks of /readyz, run again, each given 1 s). The SQL store is named
 * `postgres` or `embedded_db` by what DATABASE_URL says; nothing else is a label value.
 */
function exportReachability(registry: Registry, checks: Map<string, () => Promise<void>>, config: Config) {
  const nameOf = (check: string) =>
    check === 'db'
      ? config.DATABASE_URL
        ? 'postgres'
        : 'embedded_db'
      : check === 'redis'
        ? 'redis'
        : undefined;
  new Gauge({
    name: 'dependency_up',
    help: 'Whether this process reached a dependency when scraped: 1 yes, 0 no (postgres, embedded_db, redis)',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      await Promise.all(
        [...checks].map(async ([check, run]) => {
          const dependency = nameOf(check);
          if (!dependency) return;
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timeout')), REACH_TIMEOUT_MS);
          });
          try {
            await Promise.race([run(), timeout]);
            this.labels(dependency).set(1);
          } catch {
            this.labels(dependency).set(0);
          } finally {
            clearTimeout(timer);
          }
        }),
      );
    },
  });
}
