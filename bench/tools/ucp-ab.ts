/**
 * Where the UCP group's AP2 tail goes (issue 50): the bench's flows (bench/ucp/flows.ts) against
 * the compiled embedded system, plain and AP2 rounds alternated at one open-loop rate, and for
 * each round beside the generator's latencies: the server's own time per request (from
 * node:http's 'request' to 'finish', ./ucp-request-probe.cjs), its collections (--trace-gc), and
 * the CPU ms per flow of every thread of the server and of the generator (this process: the
 * flows' thread, the mandates' thread, libuv's pool, V8's workers), by thread name.
 *   npm run build && tsx bench/tools/ucp-ab.ts [rate=40] [rounds=2] [seconds=8]
 * UCP_AB_HEAP=<file> samples the server's allocations (collected ones included; one profile a
 * round, <file>.<n>) and prints KB a flow by function for each kind and the AP2 kind's surplus.
 * UCP_AB_TREE=<another checkout> starts that checkout's dist/ (its server against this generator);
 * BENCH_UCP_MANDATES=thread makes the mandates as session 49 did (bench/ucp/mandate.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { startProfileServer } from '../../harness/ucp-platform.ts';
import { OPS } from '../acp/flows.ts';
import { runUcpFlows } from '../ucp/flows.ts';
import { platforms } from '../ucp/run.ts';
import { allocations, type SampleNode, topAllocations } from './heap-sampling.ts';
import { cpuSecondsWithChildren, threadTimes } from './proc.ts';
import { gcPauses } from './support.ts';

const [rate = 40, rounds = 2, seconds = 8] = process.argv.slice(2).map(Number);
const dataDir = mkdtempSync(join(tmpdir(), 'ac-ucp-ab-'));
const probeOut = join(dataDir, 'probe.txt');
const probe = fileURLToPath(new URL('./ucp-request-probe.cjs', import.meta.url));
/** UCP_AB_HEAP=<file>: the server's allocations by function over the run (./heap-sampling-probe.cjs). */
const heapOut = process.env.UCP_AB_HEAP;
const heapProbe = fileURLToPath(new URL('./heap-sampling-probe.cjs', import.meta.url));
const sys = await startEmbeddedSystem(
  process.env.BENCH_NODE,
  ['--trace-gc', '--require', probe, ...(heapOut ? ['--require', heapProbe] : [])],
  {
    DATA_DIR: dataDir,
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    UCP_PROBE_OUT: probeOut,
    ...(heapOut ? { HEAP_SAMPLING_OUT: heapOut } : {}),
  },
  undefined,
  process.env.UCP_AB_TREE,
);
const profiles = await startProfileServer();
const kinds = await platforms(sys.url, dataDir, profiles);
const pid = sys.child.pid ?? 0;
/** The generator's CPU s, its mandate maker's process (reaped at each load's end) included. */
const genCpu = () => {
  const c = cpuSecondsWithChildren(process.pid);
  return c.self + c.children;
};

/** CPU ms per thread name (and niceness, policy) between two readings, summed over threads of one name. */
function byName(before: ReturnType<typeof threadTimes>, after: ReturnType<typeof threadTimes>) {
  const out = new Map<string, number>();
  for (const [tid, t] of after) {
    const d = t.cpuMs - (before.get(tid)?.cpuMs ?? 0);
    const name = `${t.name}${t.nice ? ` nice ${t.nice}` : ''}${t.policy === 5 ? ' idle' : ''}${tid === pid || tid === process.pid ? ' (main)' : ''}`;
    if (d > 0) out.set(name, (out.get(name) ?? 0) + d);
  }
  return out;
}
const perFlow = (m: Map<string, number>, flows: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([n, ms]) => `${n} ${(ms / flows).toFixed(2)}`)
    .join(', ');

for (const kind of ['plain', 'ap2'] as const)
  await runUcpFlows({ ...kinds[kind], seconds: 3, concurrency: 10 });
const windows: { kind: string; round: number; from: number; to: number }[] = [];
/** With UCP_AB_HEAP: the profile segment (./heap-sampling-probe.cjs) each round's flows allocated in. */
let segments = 0;
const heapRounds: { kind: string; file: string; flows: number }[] = [];
const cutHeapProfile = () => {
  if (!heapOut) return;
  process.kill(pid, 'SIGUSR2');
  return `${heapOut}.${++segments}`;
};
cutHeapProfile(); // the warm-up's
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? (['plain', 'ap2'] as const) : (['ap2', 'plain'] as const);
  for (const kind of order) {
    const mark = sys.output().length;
    const [s0, g0] = [threadTimes(pid), threadTimes(process.pid)];
    const gAll0 = genCpu();
    const from = Date.now() + 20 + 2000;
    const r = await runUcpFlows({ ...kinds[kind], seconds, warmupSeconds: 2, rate });
    const to = Date.now();
    const flows = rate * (seconds + 2);
    const heapFile = cutHeapProfile();
    if (heapFile) heapRounds.push({ kind, file: heapFile, flows });
    windows.push({ kind, round, from, to: from + seconds * 1000 });
    const gc = gcPauses(sys.output().slice(mark).split('\n'));
    console.log(
      `${kind} round ${round}: ${OPS.map((op) => `${op} p50 ${r.ops[op].p50.toFixed(2)} p99 ${r.ops[op].p99.toFixed(2)}`).join(', ')}; failed ${JSON.stringify(r.failures)}; generator delay p99 ${r.generatorDelayP99.toFixed(2)}${r.mandate ? `; mandate p50 ${r.mandate.p50.toFixed(2)} p99 ${r.mandate.p99.toFixed(2)}, update answer→completed p99 ${r.confirmToComplete?.p99.toFixed(2)}` : ''}`,
    );
    console.log(`  server CPU ms/flow: ${perFlow(byName(s0, threadTimes(pid)), flows)}`);
    const gen = byName(g0, threadTimes(process.pid));
    const genAll = (genCpu() - gAll0) * 1000;
    gen.set('(threads ended, maker process)', genAll - [...gen.values()].reduce((x, y) => x + y, 0));
    console.log(`  generator CPU ms/flow: ${perFlow(gen, flows)}`);
    console.log(`  server gc (${seconds + 2} s): ${gc.join('; ')}`);
    void to;
  }
}
await profiles.close();
await sys.stop();
if (heapOut) printAllocations();
const lines = readFileSync(probeOut, 'utf8').trim().split('\n');
const pct = (xs: number[], p: number) =>
  xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
for (const w of windows) {
  const parts = OPS.map((op) => {
    const xs = lines
      .map((l) => l.split(' '))
      .filter(([at, o]) => o === op && Number(at) >= w.from && Number(at) < w.to)
      .map(([, , ms]) => Number(ms));
    return `${op} p50 ${pct(xs, 0.5).toFixed(2)} p99 ${pct(xs, 0.99).toFixed(2)} (n ${xs.length})`;
  });
  console.log(`server-side ${w.kind} round ${w.round}: ${parts.join(', ')}`);
}

/** KB a flow by function (inclusive) for each kind over its rounds, and what AP2 flows allocate beyond plain ones. */
function printAllocations() {
  const byKind = new Map<string, { flows: number; total: number; inclusive: Map<string, number> }>();
  for (const { kind, file, flows } of heapRounds) {
    if (!existsSync(file)) continue;
    const a = allocations((JSON.parse(readFileSync(file, 'utf8')) as { head: SampleNode }).head);
    const k = byKind.get(kind) ?? { flows: 0, total: 0, inclusive: new Map() };
    k.flows += flows;
    k.total += a.total;
    for (const [n, b] of a.inclusive) k.inclusive.set(n, (k.inclusive.get(n) ?? 0) + b);
    byKind.set(kind, k);
  }
  const plain = byKind.get('plain');
  const ap2 = byKind.get('ap2');
  for (const [kind, k] of byKind)
    console.log(`server allocations, ${kind}: ${(k.total / k.flows / 1024).toFixed(1)} KB a flow (sampled)`);
  if (!plain || !ap2) return;
  const surplus = new Map<string, number>();
  for (const [n, b] of ap2.inclusive) {
    const more = b / ap2.flows - (plain.inclusive.get(n) ?? 0) / plain.flows;
    if (more > 0) surplus.set(n, more);
  }
  console.log(
    `AP2 flows beyond plain ones, KB a flow by function (inclusive), our code:\n${topAllocations(surplus, 1, 30, / {2}(gateway|lib|subgraphs)\//)}`,
  );
  console.log(`the same, any code:\n${topAllocations(surplus, 1, 30)}`);
}
