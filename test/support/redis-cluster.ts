/**
 * A real Redis Cluster for tests: `redis-server` processes with `cluster-enabled yes` on free
 * ports, each in its own temporary directory, joined by `redis-cli --cluster create`. Started
 * once per test file (a few seconds), and always removed: `stop()` in afterAll, plus a kill on
 * process exit in case the test runner dies first.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Cluster, Redis } from 'ioredis';
import { createRedis, type RedisSettings } from '../../lib/redis.ts';

const run = promisify(execFile);
const HOST = '127.0.0.1';

export interface RedisClusterHandle {
  /** The primaries, one per node started. */
  readonly nodes: readonly { host: string; port: number }[];
  /** How a service selects this cluster: REDIS_URL as `redis+cluster://` and REDIS_CLUSTER_NODES. */
  readonly env: { REDIS_URL: string; REDIS_CLUSTER_NODES: string };
  /** The settings createRedis takes (as loadConfig would read them from `env`). */
  readonly settings: RedisSettings;
  /** A new cluster client with the same options the services use (caller disconnects it). */
  client(): Cluster;
  /** The port of the primary that holds `key`'s slot. */
  primaryPortOf(key: string): Promise<number>;
  /** A plain connection to one node (for CLIENT PAUSE and the like; caller disconnects it). */
  connect(port: number): Redis;
  stop(): Promise<void>;
}

/** A free TCP port whose cluster-bus port (port + 10000) is free as well. */
async function freePort(): Promise<number> {
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, HOST, () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listen(0);
    if (port + 10000 > 65535) continue;
    try {
      await listen(port + 10000);
      return port;
    } catch {}
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'ac-redis-cluster-'));
  const children: ChildProcess[] = [];
  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGKILL');
          }),
      ),
    );
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) {
      let port = await freePort();
      while (ports.includes(port)) port = await freePort();
      ports.push(port);
      const nodeDir = join(dir, String(port));
      mkdirSync(nodeDir);
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          HOST,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '5000',
          '--dir',
          nodeDir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--enable-debug-command',
          'local',
        ],
        { stdio: 'ignore' },
      );
      children.push(child);
    }
    for (const port of ports) {
      await until(`node ${port} answering`, async () => {
        const { stdout } = await run('redis-cli', ['-h', HOST, '-p', String(port), 'ping']);
        return stdout.trim() === 'PONG';
      });
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `${HOST}:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () => {
        const { stdout } = await run('redis-cli', ['-h', HOST, '-p', String(port), 'cluster', 'info']);
        return stdout.includes('cluster_state:ok');
      });
    }
    const nodes = ports.map((port) => ({ host: HOST, port }));
    const env = {
      REDIS_URL: `redis+cluster://${HOST}:${ports[0]}`,
      REDIS_CLUSTER_NODES: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    };
    const settings: RedisSettings = {
      REDIS_URL: env.REDIS_URL,
      REDIS_CLUSTER: true,
      REDIS_CLUSTER_NODES: nodes.map((n) => `${n.host}:${n.port}`),
    };
    const client = () => createRedis(settings) as Cluster;
    return {
      nodes,
      env,
      settings,
      client,
      async primaryPortOf(key) {
        const probe = new Redis({ host: HOST, port: ports[0] as number, lazyConnect: true });
        try {
          await probe.connect();
          const slot = (await probe.call('cluster', 'keyslot', key)) as number;
          const shards = (await probe.call('cluster', 'slots')) as [number, number, [string, number]][];
          const owner = shards.find(([from, to]) => slot >= from && slot <= to);
          if (!owner) throw new Error(`no primary holds slot ${slot}`);
          return owner[2][1];
        } finally {
          probe.disconnect();
        }
      },
      connect: (port) => new Redis({ host: HOST, port, maxRetriesPerRequest: 1 }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
