/**
 * A throwaway redis-server on a free port for tests that crash and restart Redis; the shared
 * server on 6379 is never touched. Killed at process exit if a test failed before cleanup.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';

export interface RedisServer {
  readonly url: string;
  /** SIGKILL: a crash (nothing persisted: the data is gone, as after losing a cache node). */
  crash(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

const live = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of live) cleanup();
});

export async function throwawayRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ac-faults-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const c = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = c;
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 15_000);
      c.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
  const crash = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  const cleanup = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  live.add(cleanup);
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    crash,
    start,
    async remove() {
      live.delete(cleanup);
      await crash();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
