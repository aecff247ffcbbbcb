/**
 * What the first seconds after a start cost (issue 29, "Ready means warm"): starts the compiled
 * embedded system (`npm start`'s flags) on a fresh data directory, polls /readyz every 5 ms, and
 * from the moment it answers ready sends the REST quote at RATE/s with 100 agent orders/s beside
 * it, open loop, every request counted (no warm-up). Then the same load again as the steady
 * reference. Prints the start's timings (process start → listening → ready) and, per second
 * after ready, the p99 of each stream, beside the steady p99, and how busy the machine was in
 * each window and each second (and how much of it another guest took: steal), so a slow second
 * that was the machine's is told from one that was the system's. SCHED=1: per second, what the
 * server's threads did (ms on a core, ms waiting for one; sched.ts), its main thread, its store's
 * and the rest together (V8's compiler and collector threads, libuv's), and the generator's.
 *   npm run build && [EXTRA="--node-flag …"] [RATE=2700] [SECONDS=10] [PATH_KEY=rest] [SYSTEM_NODE=<node>] tsx bench/tools/warm-start.ts [ENV=value ...]
 */
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { orderRequests, QUOTE_CATALOG_SIZE } from '../../harness/requests.ts';
import { loadConfig } from '../../lib/config.ts';
import { type OpenLoadResult, openLoad, type StreamResult } from '../open-loop/generator.ts';
import { requestsOf, startBare } from '../open-loop/run.ts';
import { type SchedSample, schedBetween, startSchedSampler, threadNames } from './sched.ts';
import { lineBufferedNode, type MachineShare, machineSampler } from './support.ts';

const rate = Number(process.env.RATE ?? 2700);
const seconds = Number(process.env.SECONDS ?? 10);
const key = process.env.PATH_KEY ?? 'rest';
const extra = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.includes('='))
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);

export interface WarmStart {
  listeningMs: number;
  readyMs: number;
  first: { primary: StreamResult; orders: StreamResult };
  steady: { primary: StreamResult; orders: StreamResult };
  /**
   * The first ready answer on the machine's monotonic clock (µs; CLOCK_MONOTONIC, the clock of
   * V8's CPU profiles), to within a millisecond: where a `--cpu-prof` profile's "after ready" starts.
   */
  readyMonotonicUs?: number;
  /** With `keepLines`: the server's output lines, each with its arrival in ms after ready. */
  serverLines?: { at: number; text: string }[];
  /** With `keepLines`: when each request of the first window was answered, ms after ready, sorted. */
  answeredAt?: number[];
  /** With SCHED=1: per second after ready, what the server's and the generator's threads did. */
  sched?: string[];
  /** How busy the machine was (and how much the hypervisor took) in each measured window. */
  machine: { first: MachineShare; steady: MachineShare };
  perSecond: {
    second: number;
    /** p99 of the requests not shed (503) in that second, by due time. */
    primaryP99: number;
    ordersP99: number;
    /** Requests due in that second that were answered 503 (shed), and all requests due in it. */
    primaryShed: number;
    ordersShed: number;
    primarySent: number;
    ordersSent: number;
    machine: MachineShare;
  }[];
}

/**
 * The shedding as a system started for production has it (lib/config.ts's defaults): the
 * harness turns it off for tests and other benches, the warm start measures it on (issue 48).
 */
export const SHEDDING_DEFAULTS: Record<string, string> = (() => {
  const c = loadConfig({});
  return {
    SHED_QUOTE_BUDGET_MS: String(c.SHED_QUOTE_BUDGET_MS),
    SHED_ORDER_BUDGET_MS: String(c.SHED_ORDER_BUDGET_MS),
    SHED_SAMPLE_MS: String(c.SHED_SAMPLE_MS),
  };
})();

/** The per-second p99s of a start's first window, with the machine's share in each second. */
export function perSecondOf(
  cold: OpenLoadResult,
  machine: ReturnType<typeof machineSampler>,
): WarmStart['perSecond'] {
  const p = bySecond(cold.primary.samples, cold.measuredFrom);
  const o = bySecond(cold.background?.samples, cold.measuredFrom);
  const count = (due: number[] | undefined, step: number) => {
    const n = new Map<number, number>();
    for (let i = 0; due && i < due.length; i += step) {
      const s = Math.floor(((due[i] as number) - cold.measuredFrom) / 1000);
      n.set(s, (n.get(s) ?? 0) + 1);
    }
    return n;
  };
  const [pShed, oShed] = [count(cold.primary.shedAt, 1), count(cold.background?.shedAt, 1)];
  const [pDone, oDone] = [count(cold.primary.samples, 2), count(cold.background?.samples, 2)];
  return [...new Set([...p.keys(), ...pShed.keys()])]
    .sort((x, y) => x - y)
    .map((s) => ({
      second: s,
      primaryP99: p.get(s) ?? 0,
      ordersP99: o.get(s) ?? 0,
      primaryShed: pShed.get(s) ?? 0,
      ordersShed: oShed.get(s) ?? 0,
      primarySent: (pShed.get(s) ?? 0) + (pDone.get(s) ?? 0),
      ordersSent: (oShed.get(s) ?? 0) + (oDone.get(s) ?? 0),
      machine: machine.between(cold.measuredFrom + s * 1000, cold.measuredFrom + (s + 1) * 1000),
    }));
}

/** The machine's shares over a load's measured seconds. */
export const windowOf = (
  r: OpenLoadResult,
  seconds: number,
  machine: ReturnType<typeof machineSampler>,
): MachineShare => machine.between(r.measuredFrom, r.measuredFrom + seconds * 1000);

/**
 * Per second after ready: the server's main thread, its busiest other (the store's, under
 * orders), the rest of its threads together, then the generator's process (and its children).
 */
function schedBySecond(samples: SchedSample[], pid: number, cold: OpenLoadResult, secs: number): string[] {
  const names = { ...threadNames(samples, pid, 'server'), [`${process.pid}:${process.pid}`]: 'generator' };
  const line = (from: number, to: number) => {
    const { threads } = schedBetween(samples, from, to, names);
    const sum = (pick: (t: (typeof threads)[number]) => boolean) => {
      const xs = threads.filter(pick);
      return `${xs.reduce((a, t) => a + t.cpuMs, 0).toFixed(0)} on / ${xs.reduce((a, t) => a + t.waitMs, 0).toFixed(0)} waiting`;
    };
    const named = (n: string) => sum((t) => t.name === n);
    return `server main ${named('server main')}, store ${named('server busiest other thread')}, other server threads ${sum((t) => t.name.startsWith(`${pid}:`))}, generator process ${sum((t) => !t.name.startsWith('server') && !t.name.startsWith(`${pid}:`))} (ms)`;
  };
  const out: string[] = [];
  for (let s = 0; s < secs; s++)
    out.push(`second ${s}: ${line(cold.measuredFrom + s * 1000, cold.measuredFrom + (s + 1) * 1000)}`);
  return out;
}

/** When each request of a load was answered (due time + latency), ms after its measuredFrom, sorted. */
function answeredAt(r: OpenLoadResult): number[] {
  const out: number[] = [];
  for (const samples of [r.primary.samples, r.background?.samples])
    for (let i = 0; samples && i + 1 < samples.length; i += 2)
      out.push((samples[i] as number) - r.measuredFrom + (samples[i + 1] as number));
  return out.sort((a, b) => a - b);
}

/** "87 % busy (3 % stolen)". */
export const shareText = (m: MachineShare): string =>
  `${(m.busy * 100).toFixed(0)} % busy (${(m.stolen * 100).toFixed(0)} % stolen)`;

/** p99 per whole second after `t0` (Unix ms) from the generator's (due time, latency) pairs. */
export function bySecond(samples: number[] | undefined, t0: number): Map<number, number> {
  const hists = new Map<number, hdr.Histogram>();
  for (let i = 0; samples && i + 1 < samples.length; i += 2) {
    const s = Math.floor(((samples[i] as number) - t0) / 1000);
    const h = hists.get(s) ?? hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000 });
    hists.set(s, h);
    h.recordValue(Math.max(1, Math.round((samples[i + 1] as number) * 1000)));
  }
  return new Map([...hists].map(([s, h]) => [s, h.getValueAtPercentile(99) / 1000]));
}

/** A port free now (the system is told it before it starts, so the load can wait for it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface WarmStartOptions {
  rate?: number;
  seconds?: number;
  /** Another checkout whose dist/ is started (an A/B of two builds; harness/processes.ts). */
  tree?: string;
  /** Node flags for the system (default: EXTRA's). */
  nodeArgs?: string[];
  /** The command that runs node for the system (e.g. a wrapper that line-buffers its stdout). */
  node?: string;
  /** Return the server's output lines (bench/tools/opt-trace.ts reads V8's traces from them). */
  keepLines?: boolean;
}

export async function warmStart(
  env: Record<string, string> = {},
  o: WarmStartOptions = {},
): Promise<WarmStart> {
  const r = o.rate ?? rate;
  const secs = o.seconds ?? seconds;
  const bare = await startBare();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = (untilReady: boolean) =>
    openLoad({
      url,
      primary: { requests: requestsOf(key)(), rate: r },
      background: { requests: orderRequests(), rate: 100 },
      seconds: secs,
      samples: true,
      ...(untilReady ? { untilReady: { readyUrl: `${url}/readyz`, warmupUrl: bare.url } } : {}),
    });
  const machine = machineSampler();
  let sys: ServiceProcess | undefined;
  let sampler: ReturnType<typeof startSchedSampler> | undefined;
  try {
    const started = Date.now();
    // The load starts first, against the bare route, and moves to the system at its first ready.
    const first = load(true);
    sys = await startProcess(
      'embedded',
      {
        DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-warm-')),
        CATALOG_SIZE: String(QUOTE_CATALOG_SIZE),
        RATE_LIMIT_CAPACITY: '1000000000',
        RATE_LIMIT_REFILL_PER_SECOND: '1000000',
        PORT: String(port),
        ...SHEDDING_DEFAULTS,
        ...env,
      },
      120_000,
      {
        compiled: true,
        nodeArgs: o.nodeArgs ?? process.env.EXTRA?.split(' ').filter(Boolean) ?? [],
        ...(o.tree ? { tree: o.tree } : {}),
        // TRACE prints the server's lines by arrival: V8's traces must not wait in a 4 KB buffer.
        ...(o.node || process.env.TRACE ? { node: o.node ?? lineBufferedNode() } : {}),
      },
    );
    const pid = sys.child.pid;
    const listeningMs = Date.now() - started;
    if (process.env.SCHED === '1' && pid) sampler = startSchedSampler([pid, process.pid], 20);
    const lines: { at: number; text: string }[] = [];
    // A chunk may end inside a line: its tail waits for the next chunk.
    let partial = '';
    sys.child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts.filter(Boolean)) lines.push({ at: Date.now(), text });
    });
    const cold = await first;
    const readyMonotonicUs =
      Number(process.hrtime.bigint() / 1000n) - (Date.now() - cold.measuredFrom) * 1000;
    if (process.env.TRACE)
      for (const l of lines.filter((x) => x.at < cold.measuredFrom + 3000))
        console.log(`  ${((l.at - cold.measuredFrom) / 1000).toFixed(3)} s ${l.text.slice(0, 160)}`);
    for (const t of cold.trace ?? []) console.log(`  trace ${t}`);
    const steady = await load(false);
    const samples = sampler ? await sampler.stop() : [];
    sampler = undefined;
    return {
      ...(samples.length > 0 && pid ? { sched: schedBySecond(samples, pid, cold, secs) } : {}),
      ...(o.keepLines
        ? {
            serverLines: lines.map((l) => ({ at: l.at - cold.measuredFrom, text: l.text })),
            answeredAt: answeredAt(cold),
          }
        : {}),
      listeningMs,
      readyMs: cold.measuredFrom - started,
      readyMonotonicUs,
      first: { primary: cold.primary, orders: cold.background as StreamResult },
      steady: { primary: steady.primary, orders: steady.background as StreamResult },
      machine: { first: windowOf(cold, secs, machine), steady: windowOf(steady, secs, machine) },
      perSecond: perSecondOf(cold, machine),
    };
  } finally {
    machine.stop();
    await sampler?.stop();
    await sys?.stop();
    await bare.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // SYSTEM_NODE: the system on another Node binary (the image's Node 24, say), the generator on this one.
  const r = await warmStart(
    extra,
    process.env.SYSTEM_NODE ? { node: lineBufferedNode(process.env.SYSTEM_NODE) } : {},
  );
  const f = (n: number) => n.toFixed(2);
  console.log(
    `listening after ${r.listeningMs.toFixed(0)} ms, ready after ${r.readyMs.toFixed(0)} ms (${JSON.stringify(extra)})`,
  );
  console.log(
    `first ${seconds} s after ready: ${key} p99 ${f(r.first.primary.p99)} ms (max ${f(r.first.primary.max)}), orders p99 ${f(r.first.orders.p99)} ms (max ${f(r.first.orders.max)}); accepted p99 ${f(r.first.primary.accepted.p99)} / ${f(r.first.orders.accepted.p99)} ms; shed ${r.first.primary.shed} / ${r.first.orders.shed}`,
  );
  console.log(
    `steady ${seconds} s:           ${key} p99 ${f(r.steady.primary.p99)} ms, orders p99 ${f(r.steady.orders.p99)} ms`,
  );
  console.log(`machine: first ${shareText(r.machine.first)}, steady ${shareText(r.machine.steady)}`);
  for (const line of r.sched ?? []) console.log(`  sched ${line}`);
  for (const s of r.perSecond)
    console.log(
      `  second ${s.second}: ${key} p99 ${f(s.primaryP99)} ms, orders p99 ${f(s.ordersP99)} ms, shed ${s.primaryShed}/${s.primarySent} and ${s.ordersShed}/${s.ordersSent}, machine ${shareText(s.machine)}`,
    );
}
