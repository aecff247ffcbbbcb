/**
 * What an agent order costs the distributed topology (issue 29, docs/performance.md
 * "Distributed mixed load"): starts the bench's distributed system (two compiled gateways over
 * the three subgraph processes, Redis, Postgres), sends RATE orders/s spread over both gateways,
 * open loop (3 s not counted, then SECONDS counted), optionally with the REST or GraphQL quote at
 * QUOTE_RATE/s beside (BESIDE=rest|graphql), and prints CPU ms per order of each process from
 * /proc: the gateways, each subgraph process, and the Postgres backends serving this system's
 * connections (found by their client ports; the machine's other Postgres work is not counted).
 * Beside each process's CPU, the time its threads waited for a core (ms per second of the run,
 * from /proc schedstat: bench/tools/sched.ts), and the load generator's (this process) too: on
 * 2 cores a process that waits long is crowded out, not slow.
 * PROF=1: gateway 1 and procurement run with --cpu-prof; their self-time summaries (the measured
 * load only) are printed after.
 *   npm run build && [RATE=100] [SECONDS=10] [BESIDE=rest QUOTE_RATE=40] [PROF=1] tsx bench/tools/order-cpu.ts
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { orderRequests } from '../../harness/requests.ts';
import { TEST_DATABASE_URL } from '../../harness/services.ts';
import { startDistributedBench, untilReady } from '../open-loop/distributed.ts';
import { openLoad } from '../open-loop/generator.ts';
import { requestsOf } from '../open-loop/run.ts';
import { cpuSeconds } from './proc.ts';
import { schedByProcess, startSchedSampler } from './sched.ts';

const rate = Number(process.env.RATE ?? 100);
const seconds = Number(process.env.SECONDS ?? 10);
const beside = process.env.BESIDE;
const quoteRate = Number(process.env.QUOTE_RATE ?? 40);

/** Postgres backend pids whose client is one of `pids` (ss for the ports, pg_stat_activity for the backends). */
async function backendsOf(pids: number[]): Promise<number[]> {
  const ss = execFileSync('ss', ['-tnpH', 'dst', '127.0.0.1:5432'], { encoding: 'utf8' });
  const ports = ss
    .split('\n')
    .filter((l) => pids.some((p) => l.includes(`pid=${p},`)))
    .map((l) => Number(/127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:5432/.exec(l)?.[1]))
    .filter((p) => p > 0);
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  const rows = (
    await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1)', [ports])
  ).rows;
  await c.end();
  return rows.map((r) => r.pid);
}

const profDir = mkdtempSync(join(tmpdir(), 'ac-order-cpu-'));
const prof = (label: string) =>
  process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, label)}`] : [];
const spawned = performance.now();
const d = await startDistributedBench({ nodeArgs: (name) => (name === 'procurement' ? prof(name) : []) });
const skipMs = { gateway: 0, procurement: 0 };
try {
  await Promise.all(Object.values(d.subgraphs.processes).map((p) => untilReady(`${p.url}/readyz`)));
  const gatewaysSpawned = performance.now();
  const gateways = await d.startGateways({ nodeArgs: (i) => (i === 0 ? prof('gateway') : []) });
  const procs: [string, number][] = [
    ...gateways.map((g, i): [string, number] => [`gateway ${i + 1}`, g.child.pid as number]),
    ...Object.entries(d.subgraphs.processes).map(([n, p]): [string, number] => [n, p.child.pid as number]),
  ];
  const run = (s: number, warm: number) =>
    openLoad({
      url: d.urls[0] as string,
      primary: { requests: orderRequests(), rate, urls: d.urls },
      ...(beside ? { background: { requests: requestsOf(beside)(), rate: quoteRate, urls: d.urls } } : {}),
      seconds: s,
      warmupSeconds: warm,
    });
  await run(3, 0);
  const backends = await backendsOf(procs.map(([, pid]) => pid));
  const all: [string, number[]][] = [
    ...procs.map(([n, p]): [string, number[]] => [n, [p]]),
    ['postgres backends', backends],
  ];
  const cpu = () =>
    all.map(([, pids]) =>
      pids.reduce(
        (a, p) =>
          a +
          (() => {
            try {
              return cpuSeconds(p);
            } catch {
              return 0;
            }
          })(),
        0,
      ),
    );
  const before = cpu();
  skipMs.procurement = Math.round(performance.now() - spawned);
  skipMs.gateway = Math.round(performance.now() - gatewaysSpawned);
  const sampler = startSchedSampler([process.pid, ...all.flatMap(([, pids]) => pids)], 20);
  const t0 = performance.now();
  const r = await run(seconds, 0);
  const wall = (performance.now() - t0) / 1000;
  const after = cpu();
  const sched = schedByProcess(await sampler.stop());
  /** ms waiting for a core per second of the run, summed over the processes' threads. */
  const waiting = (pids: number[]) =>
    (pids.reduce((a, p) => a + (sched.get(p)?.waitMs ?? 0), 0) / wall).toFixed(0);
  const orders = r.primary.completed;
  console.log(
    `${orders} orders in ${wall.toFixed(1)} s at ${rate}/s${beside ? ` with ${beside} quotes at ${quoteRate}/s beside (p99 ${r.background?.p99.toFixed(1)} ms)` : ''}: p50 ${r.primary.p50.toFixed(1)} ms, p99 ${r.primary.p99.toFixed(1)} ms, bad ${r.primary.non2xx + r.primary.errors}; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  let total = 0;
  for (const [i, [name, pids]] of all.entries()) {
    const s = (after[i] ?? 0) - (before[i] ?? 0);
    total += s;
    console.log(
      `  ${name.padEnd(18)} ${((s * 1000) / orders).toFixed(2)} ms CPU per order (${((s / wall) * 100).toFixed(0)} % of a core; waiting for a core ${waiting(pids)} ms/s; ${pids.length} process${pids.length === 1 ? '' : 'es'})`,
    );
  }
  console.log(`  ${'load generator'.padEnd(18)} waiting for a core ${waiting([process.pid])} ms/s`);
  console.log(
    `  ${'total'.padEnd(18)} ${((total * 1000) / orders).toFixed(2)} ms CPU per order (${((total / wall) * 100).toFixed(0)} % of a core)`,
  );
} finally {
  await d.stop();
}
for (const label of process.env.PROF ? (['gateway', 'procurement'] as const) : []) {
  const dir = join(profDir, label);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) continue;
  console.log(`\n${label}, self time over the measured load (${join(dir, file)}):`);
  spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/tools/cpuprofile-summary.ts', join(dir, file), '30', String(skipMs[label])],
    { stdio: 'inherit' },
  );
}
