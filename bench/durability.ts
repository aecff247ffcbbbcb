/**
 * The durability group of `npm run bench` (`-- --only durability`, issue 45): what syncing the
 * embedded store's WAL before each acknowledgement costs. Three embedded systems (`npm start`'s
 * compiled process, store on disk): EMBEDDED_DB_FSYNC=on (the default: the store's thread syncs
 * the commits that came together once, before their answers), `commit` (a sync per commit, as
 * `on` was before the group commit) and `off` (PGlite as shipped: what the system did before it
 * synced), loaded in alternated rounds:
 *
 *   1. /v2 orders, closed loop (10 at a time): orders/s;
 *   2. /v2 orders, open loop at half of the `off` system's maximum, the same rate for all: p99
 *      from each request's due time;
 *   3. ACP completions (sessions made first), closed loop: completions/s;
 *   4. syncs per order: strace attached to the `on` system (-c, every thread) for an open-loop
 *      window of its own at the same rate, `fsync` + `fdatasync` calls over orders answered.
 *
 * Goals: with the sync, orders/s ≥ 0.7× and the p99 at half load ≤ 1.5× the `off` system's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../harness/embedded.ts';
import type { ServiceProcess } from '../harness/processes.ts';
import { orderRequests } from '../harness/requests.ts';
import { runOp } from './acp/flows.ts';
import { issueBenchKey } from './acp/key.ts';
import { load } from './loadgen.ts';
import { openLoad } from './open-loop/generator.ts';

export const DURABILITY_GOALS = { throughput: 0.7, p99: 1.5 } as const;
type Mode = 'off' | 'commit' | 'on';
/** `commit`: a sync per commit, what `on` was before the store's thread grouped its commits. */
const MODES: readonly Mode[] = ['off', 'commit', 'on'];
const zero = (): Record<Mode, number> => ({ off: 0, commit: 0, on: 0 });

export interface DurabilityRound {
  orders: Record<Mode, number>;
  p99: Record<Mode, number>;
  completions: Record<Mode, number>;
}

export interface DurabilityRun {
  rounds: DurabilityRound[];
  rate: number;
  syncsPerOrder: number;
}

async function countSyncs(
  pid: number,
  during: () => Promise<number>,
): Promise<{ syncs: number; orders: number }> {
  const strace: ChildProcess = spawn(
    'strace',
    ['-f', '-c', '-e', 'trace=fsync,fdatasync', '-p', String(pid)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let summary = '';
  strace.stderr?.on('data', (c: Buffer) => {
    summary += c.toString();
  });
  // strace prints "Process N attached" for each thread once it holds them all.
  await new Promise((r) => setTimeout(r, 1000));
  const orders = await during();
  const exited = new Promise((r) => strace.once('exit', r));
  strace.kill('SIGINT');
  await exited;
  const calls = (name: string) => {
    const row = summary.split('\n').find((l) => l.trim().endsWith(` ${name}`));
    return Number(row?.trim().split(/\s+/)[3] ?? 0);
  };
  return { syncs: calls('fsync') + calls('fdatasync'), orders };
}

export async function runDurability(quick: boolean, log: (s: string) => void): Promise<DurabilityRun> {
  const seconds = quick ? 3 : 8;
  const systems = {} as Record<Mode, ServiceProcess & { dataDir: string; key: string }>;
  try {
    for (const mode of MODES) {
      const dataDir = mkdtempSync(join(tmpdir(), `ac-bench-fsync-${mode}-`));
      const sys = await startEmbeddedSystem(process.env.BENCH_NODE, [], {
        DATA_DIR: dataDir,
        EMBEDDED_DB_FSYNC: mode,
      });
      systems[mode] = Object.assign(sys, {
        dataDir,
        key: await issueBenchKey(sys.url, dataDir, `bench-fsync-${mode}`),
      });
      const orders = { url: sys.url, requests: orderRequests(), connections: 10 };
      await load({ ...orders, seconds: quick ? 1 : 3 });
      await runOp({ url: sys.url, key: systems[mode].key, op: 'create', seconds: 1, concurrency: 10 });
    }
    const rounds: DurabilityRound[] = [];
    let rate = 0;
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      const r: DurabilityRound = { orders: zero(), p99: zero(), completions: zero() };
      for (const mode of MODES) {
        const url = systems[mode].url;
        r.orders[mode] = (await load({ url, requests: orderRequests(), connections: 10, seconds })).rps;
      }
      if (round === 0) rate = Math.max(1, Math.round(r.orders.off / 2));
      for (const mode of MODES) {
        const open = await openLoad({
          url: systems[mode].url,
          primary: { requests: orderRequests(), rate },
          seconds,
          warmupSeconds: 1,
        });
        r.p99[mode] = open.primary.p99;
      }
      for (const mode of MODES) {
        const { url, key } = systems[mode];
        const made = await runOp({ url, key, op: 'create', seconds, concurrency: 10 });
        const done = await runOp({ url, key, op: 'complete', seconds, concurrency: 10, ids: made.ids });
        r.completions[mode] = done.perSecond;
      }
      rounds.push(r);
      log(
        `durability / round ${round + 1}: ${MODES.map((m) => `${m}: orders/s ${Math.round(r.orders[m])}, p99 at ${rate}/s ${r.p99[m].toFixed(2)} ms, completions/s ${Math.round(r.completions[m])}`).join('; ')}\n`,
      );
    }
    const on = systems.on;
    const pid = on.child.pid;
    if (pid === undefined) throw new Error('the fsync=on system has no pid');
    const counted = await countSyncs(pid, async () => {
      const open = await openLoad({ url: on.url, primary: { requests: orderRequests(), rate }, seconds });
      return open.primary.completed;
    });
    const syncsPerOrder = counted.orders ? counted.syncs / counted.orders : 0;
    log(
      `durability / syncs: ${counted.syncs} for ${counted.orders} orders (${syncsPerOrder.toFixed(2)} per order)\n`,
    );
    return { rounds, rate, syncsPerOrder };
  } finally {
    for (const s of Object.values(systems)) await s.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function durabilityTable(run: DurabilityRun): string {
  const lines = [
    '| round | /v2 orders/s off | commit | on | on ÷ off | on ÷ commit | p99 ms at half load off | commit | on | on ÷ off | on ÷ commit | ACP completions/s off | commit | on | on ÷ off | on ÷ commit |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const x = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const cells = (v: Record<Mode, number>, d: number) =>
    `${fmt(v.off, d)} | ${fmt(v.commit, d)} | ${fmt(v.on, d)} | ${x(v.on, v.off)} | ${x(v.on, v.commit)}`;
  for (const [i, r] of run.rounds.entries())
    lines.push(`| ${i + 1} | ${cells(r.orders, 0)} | ${cells(r.p99, 2)} | ${cells(r.completions, 0)} |`);
  const ratio = (f: (r: DurabilityRound) => Record<Mode, number>, base: Mode) =>
    median(run.rounds.map((r) => f(r).on / f(r)[base])).toFixed(2);
  const orders = Number(ratio((r) => r.orders, 'off'));
  const p99 = Number(ratio((r) => r.p99, 'off'));
  const met = (ok: boolean) => (ok ? 'met' : 'not met');
  return `${lines.join('\n')}\n\nMedians of the rounds: orders/s ${orders.toFixed(2)}× (goal ≥ ${DURABILITY_GOALS.throughput}×: ${met(orders >= DURABILITY_GOALS.throughput)}), p99 at half load (${fmt(run.rate)} orders/s, open loop) ${p99.toFixed(2)}× (goal ≤ ${DURABILITY_GOALS.p99}×: ${met(p99 <= DURABILITY_GOALS.p99)}), ACP completions/s ${ratio((r) => r.completions, 'off')}× the \`off\` system's; against a sync per commit (\`commit\`): orders/s ${ratio((r) => r.orders, 'commit')}×, p99 ${ratio((r) => r.p99, 'commit')}×, ACP completions/s ${ratio((r) => r.completions, 'commit')}×. Syncs per order with EMBEDDED_DB_FSYNC=on: ${run.syncsPerOrder.toFixed(2)} (\`fsync\` + \`fdatasync\` calls of every thread, strace -c, over the orders answered in an open-loop window at the same rate).`;
}
