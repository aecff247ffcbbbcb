/**
 * Hive Gateway (The Guild, `@graphql-hive/gateway`), the peer a user would pick (issue 29), over
 * the subgraph processes of subgraph-processes.ts. It is a devDependency of the bench only:
 * bench/peers/hive/package.json pins it, and `ensureHive()` runs `npm ci` there when it is
 * absent, so the project's own `npm ci` and CI never install it.
 *
 * It serves the committed supergraph (schemas/supergraph.graphql, composed from the same
 * subgraph SDLs the gateway uses) with the subgraphs' real addresses written in, its CLI with its
 * defaults, and one setting our subgraphs require: the gateway secret header on every subgraph
 * call. `dedupe: false` turns off its merging of identical in-flight subgraph requests
 * (`deduplicateInflightRequests`, on by default), for the row that shows what the merging does.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { supergraphSdl } from '../../gateway/graphql.ts';
import { type ServiceProcess, untilListening } from '../../harness/processes.ts';

const dir = new URL('./hive/', import.meta.url).pathname;
const bin = join(dir, 'node_modules/@graphql-hive/gateway/dist/bin.js');

/** Installs the pinned Hive Gateway into bench/peers/hive when it is not there yet. */
export function ensureHive(): void {
  if (existsSync(bin)) return;
  process.stderr.write('installing Hive Gateway into bench/peers/hive (npm ci) …\n');
  execFileSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

export async function startHiveGateway(
  urls: Record<string, string>,
  secret: string,
  opts: { dedupe?: boolean; label?: string } = {},
): Promise<ServiceProcess> {
  ensureHive();
  const work = mkdtempSync(join(tmpdir(), 'ac-bench-hive-'));
  const sdl = supergraphSdl().replace(
    /http:\/\/([a-z]+)\.subgraph\.invalid\/graphql/g,
    (whole, name: string) => (urls[name] ? `${urls[name]}/graphql` : whole),
  );
  writeFileSync(join(work, 'supergraph.graphql'), sdl);
  const entry: Record<string, unknown> = { headers: [['x-gateway-secret', secret]] };
  if (opts.dedupe === false) entry.options = { deduplicateInflightRequests: false };
  writeFileSync(
    join(work, 'gateway.config.mjs'),
    `export const gatewayConfig = ${JSON.stringify({ transportEntries: { '*': entry } })};\n`,
  );
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      bin,
      'supergraph',
      'supergraph.graphql',
      '-c',
      'gateway.config.mjs',
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
    ],
    {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const label = opts.label ?? 'hive';
  const banner = `Listening on http://127.0.0.1:${port}`;
  return untilListening(label, child, 60_000, (out) =>
    out.includes(banner) ? `http://127.0.0.1:${port}` : undefined,
  );
}
