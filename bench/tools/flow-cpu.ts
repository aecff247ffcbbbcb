/**
 * What an ACP flow (create, update, complete) costs the server at the closed loop's maximum and
 * at a fixed rate below it: the server's CPU per flow, by thread (user + system, and system
 * alone), and the machine's busy share, alternated in one process's life:
 *   npm run build && tsx bench/tools/flow-cpu.ts [flows/s=half the first closed loop] [rounds=2]
 * Each round runs the closed loop (10 flows at a time, 10 s), then the open loop at the rate
 * (10 s, every flow counted: the p99s include the generator's own first second; the CPU per flow
 * is the figure this tool is for). The busiest thread after the request thread is the embedded
 * store's (lib/db/pglite-worker.ts); the rest are V8's and libuv's. The bench's "50 % of the
 * maximum" is a rate of the closed loop's flows; this shows what share of the machine that rate is, and why (docs/performance.md, "ACP", ninth pass).
 * The control, in the same run: a bare node:http route (its own process), its CPU per request
 * at its closed-loop maximum and at the flows' request rate (three requests a flow).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { type FlowResult, runFlows } from '../acp/flows.ts';
import { issueBenchKey } from '../acp/key.ts';
import { load } from '../loadgen.ts';
import { openLoad } from '../open-loop/generator.ts';
import { startBare } from '../open-loop/run.ts';
import { cpuSeconds, machineJiffies, threadTimes, threadTimesBetween } from './proc.ts';
import { machineShare } from './support.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'ac-flow-cpu-'));
const sys = await startEmbeddedSystem(undefined, [], { DATA_DIR: dataDir });
const pid = sys.child.pid;
if (!pid) throw new Error('no server process');
const key = await issueBenchKey(sys.url, dataDir, 'flow-cpu');
await runFlows({ url: sys.url, key, seconds: 10, warmupSeconds: 3, concurrency: 10 });

let rate = Number(process.argv[2] ?? 0);
const rounds = Number(process.argv[3] ?? 2);
const measure = async (label: string, run: () => Promise<FlowResult>) => {
  const [m0, t0] = [machineJiffies(), threadTimes(pid)];
  const r = await run();
  const [m1, t1] = [machineJiffies(), threadTimes(pid)];
  // Completions counted, not flowsPerSecond × 10: an open loop's rate is taken over its drain too.
  const flows = Math.max(1, r.ops.complete.count);
  const per = (ms: number) => (ms / flows).toFixed(2);
  const rows = threadTimesBetween(t0, t1);
  const total = rows.reduce((s, t) => s + t.cpuMs, 0);
  const { busy, stolen: steal } = machineShare(m0, m1);
  console.log(
    `${label}: ${r.flowsPerSecond.toFixed(0)} flows/s, machine ${(busy * 100).toFixed(0)} % busy (${(steal * 100).toFixed(0)} % stolen), server ${per(total)} ms CPU per flow; create p99 ${r.ops.create.p99.toFixed(1)}, update ${r.ops.update.p99.toFixed(1)}, complete ${r.ops.complete.p99.toFixed(1)} ms`,
  );
  console.log(
    `  by thread (ms per flow, of it in the kernel): ${rows
      .slice(0, 4)
      .map((t, i) => {
        const name = t.tid === pid ? 'request thread' : i <= 1 ? `store thread #${t.tid}` : `#${t.tid}`;
        return `${name} ${per(t.cpuMs)} (${per(t.sysMs)})`;
      })
      .join(', ')}`,
  );
  return r;
};
for (let round = 1; round <= rounds; round++) {
  const closed = await measure(`round ${round}, closed loop (10 at a time)`, () =>
    runFlows({ url: sys.url, key, seconds: 10, warmupSeconds: 0, concurrency: 10 }),
  );
  if (!rate) rate = Math.max(1, Math.round(closed.flowsPerSecond / 2));
  await measure(`round ${round}, open loop at ${rate} flows/s`, () =>
    runFlows({ url: sys.url, key, seconds: 10, warmupSeconds: 0, rate }),
  );
}
await sys.stop();

// The control: the same question asked of a route that does nothing.
const bare = await startBare();
const barePid = bare.child.pid;
if (!barePid) throw new Error('no control process');
const requests = [{ path: '/bare' }];
await load({ url: bare.url, requests, connections: 10, seconds: 3 });
const c0 = cpuSeconds(barePid);
const max = await load({ url: bare.url, requests, connections: 10, seconds: 10 });
const c1 = cpuSeconds(barePid);
await openLoad({ url: bare.url, primary: { requests, rate: rate * 3 }, seconds: 10 });
const c2 = cpuSeconds(barePid);
const us = (s: number, n: number) => ((s * 1e6) / n).toFixed(0);
console.log(
  `control, bare node:http route: ${us(c1 - c0, max.requests)} µs CPU per request closed loop (${Math.round(max.rps)}/s), ${us(c2 - c1, rate * 3 * 10)} µs at ${rate * 3}/s`,
);
await bare.stop();
