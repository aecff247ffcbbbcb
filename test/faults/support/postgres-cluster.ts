/**
 * A throwaway PostgreSQL cluster for tests that stop and restart the database: `initdb` into a
 * temporary directory, `pg_ctl` on a free port, removed at the end (and at process exit if a
 * test failed before its cleanup), so the machine's shared server is never touched.
 *
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';

const run = promisify(execFile);

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  throw new Error('no PostgreSQL binaries found (set PG_BIN)');
}

const asRoot = process.getuid?.() === 0;
/** The command line, run as the postgres user when we are root. */
const command = (bin: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];

export interface PostgresCluster {
  readonly url: string;
  readonly port: number;
  /** Stops the server; `immediate` is a crash (no shutdown checkpoint, recovery on start). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its directory. */
  remove(): Promise<void>;
}

const live = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of live) cleanup();
});

export async function throwawayPostgres(): Promise<PostgresCluster> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'ac-faults-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const pg = (tool: string, args: string[]) => run(...command(join(bin, tool), args), { timeout: 60_000 });
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-locale', '-E', 'UTF8']);
  // fsync off: the faults here kill processes, not the machine, so the OS keeps every write;
  // it spares the shared disk. The socket lives in the temporary directory.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = () =>
    pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']).then(
      () => undefined,
    );
  const stop = (mode: 'immediate' | 'fast' = 'fast') =>
    pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']).then(() => undefined);
  const cleanup = () => {
    try {
      execFileSync(...command(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']), {
        stdio: 'ignore',
      });
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  live.add(cleanup);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    async remove() {
      live.delete(cleanup);
      await stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
