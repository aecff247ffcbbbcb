/**
 * CPU per GraphQL cart quote of each process of the distributed topology, for our gateway and
 * for the naive peer over the same three subgraph processes:
 *   npm run build && tsx bench/tools/profile-distributed.ts [seconds=10] [--only=ours|naive] [--prof]
 *     [--prof-subgraphs] [--connections=10]
 * Starts the compiled subgraph processes (as the quote bench does), then each gateway in turn
 * (ours compiled with its start flags; the naive peer in its own process), warms it up 3 s, and
 * reads /proc/<pid>/stat (user + system) of all four processes around a 10-connection load.
 * --prof runs each gateway with --cpu-prof and prints its self-time summary over the measured load.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceProcess, startCommand, startProcess } from '../../harness/processes.ts';
import { QUOTE_REQUESTS } from '../../harness/requests.ts';
import { load } from '../loadgen.ts';
import { startSubgraphProcesses } from '../peers/subgraph-processes.ts';
import { addRuleDirect } from '../scenarios/quote.ts';
import { cpuSeconds } from './proc.ts';

const args = process.argv.slice(2);
const seconds = Number(args.find((a) => !a.startsWith('--')) ?? 10);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const prof = args.includes('--prof');
const connections = Number(
  args.find((a) => a.startsWith('--connections='))?.slice('--connections='.length) ?? 10,
);

const profDir = mkdtempSync(join(tmpdir(), 'ac-prof-dist-'));
// --prof-subgraphs: the subgraph processes write profiles too (of their whole life, both gateways' loads).
const subgraphs = await startSubgraphProcesses({ CATALOG_SIZE: '10000' }, (name) =>
  args.includes('--prof-subgraphs') ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] : [],
);
await addRuleDirect(subgraphs);
const gatewayEnv = {
  ...subgraphs.env,
  PRICING_URL: subgraphs.urls.pricing,
  PROMOTIONS_URL: subgraphs.urls.promotions,
  PROCUREMENT_URL: subgraphs.urls.procurement,
};
const profArgs = (label: string) => (prof ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, label)}`] : []);

/** Prints the self-time summary of the profile a stopped gateway wrote, its first `skipMs` left out. */
function summarise(label: string, skipMs: number): void {
  const dir = join(profDir, label);
  const file = prof ? readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) : undefined;
  if (!file) return;
  console.log(`\n${label} gateway, self time over the measured load:`);
  spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/tools/cpuprofile-summary.ts', join(dir, file), '40', String(skipMs)],
    { stdio: 'inherit' },
  );
  console.log(`profile: ${join(dir, file)}`);
}

/** Returns the milliseconds from `since` to the start of the measured load (a profile skips them). */
async function measure(label: string, gw: ServiceProcess, since: number): Promise<number> {
  const request = QUOTE_REQUESTS.graphql();
  await load({ url: gw.url, requests: [request], connections, seconds: 3 });
  const skipMs = Math.round(performance.now() - since);
  const procs = { gateway: gw, ...subgraphs.processes };
  const pids = Object.entries(procs).map(([name, p]) => [name, p.child.pid as number] as const);
  const before = pids.map(([, pid]) => cpuSeconds(pid));
  const r = await load({ url: gw.url, requests: [request], connections, seconds });
  const per = pids.map(
    ([name, pid], i) => [name, ((cpuSeconds(pid) - (before[i] ?? 0)) * 1000) / r.requests] as const,
  );
  const total = per.reduce((a, [, ms]) => a + ms, 0);
  console.log(
    `${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
  );
  console.log(
    `  CPU ms per quote: ${per.map(([n, ms]) => `${n} ${ms.toFixed(3)}`).join(', ')}; total ${total.toFixed(3)}`,
  );
  return skipMs;
}

try {
  if (only !== 'ours') {
    const spawnedAt = performance.now();
    const naive = await startCommand(
      'naive',
      process.execPath,
      [...profArgs('naive'), '--import', 'tsx', 'bench/peers/naive-gateway-main.ts'],
      gatewayEnv,
    );
    const skipMs = await measure('naive', naive, spawnedAt);
    await naive.stop();
    summarise('naive', skipMs);
  }
  if (only !== 'naive') {
    const spawnedAt = performance.now();
    const ours = await startProcess(
      'gateway',
      { ...gatewayEnv, TOPOLOGY: 'distributed', LOG_LEVEL: 'info' },
      120_000,
      { compiled: true, nodeArgs: profArgs('ours') },
    );
    const skipMs = await measure('ours', ours, spawnedAt);
    await ours.stop();
    summarise('ours', skipMs);
  }
} finally {
  await subgraphs.close();
  if (args.includes('--prof-subgraphs')) console.log(`subgraph profiles under ${profDir}/<name>/`);
}
