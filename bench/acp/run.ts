/**
 * The ACP group of `npm run bench` (`-- --only acp`): checkout sessions on the embedded system
 * (`npm start`'s compiled process, its store on disk), beside the /v2 agent order measured in the
 * same run.
 *
 *   1. closed loop, 10 at a time: the /v2 order's maximum (orders/s); each ACP operation alone,
 *      the completions in three pairs alternated with the /v2 order (the throughput ratio is the
 *      median pair's); then ACP flows (create → update → complete by purchase order), each
 *      operation's latency and the completions per second;
 *   2. open loop at 50 % of the flow maximum, alone and with 100 /v2 orders/s beside it, in
 *      alternated rounds (the first alone step follows the closed loop's backlog, so one step
 *      of each is not enough to tell them apart), each request's latency from its due time;
 *      in each round also ACP cart flows (create → update, the sessions' lines) at the same
 *      rate, before or after the sessions alone by turns (./cart-table.ts).
 *
 * Goals (issue 28), embedded, at half load: create p99 ≤ 15 ms, complete p99 ≤ 25 ms;
 * completions ≥ 0.5 × the /v2 order's throughput. Issue 49: cart create and update p99 at half
 * load ≤ the checkout session's own, round by round.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { orderRequests } from '../../harness/requests.ts';
import { load } from '../loadgen.ts';
import { type FlowResult, OPS, type Op, type OpResult, runFlows, runOp } from './flows.ts';
import { issueBenchKey } from './key.ts';

/** A cart flow's operations (no completion). */
const CART_OPS: readonly Op[] = ['create', 'update'];
export const ACP_GOALS = { create: 15, complete: 25, throughputRatio: 0.5 } as const;
/** Pairs of the /v2 order and completions alone, and the seconds of each half. */
const COMPARE_ROUNDS = 3;
const compareSeconds = 4;
const ORDERS_BESIDE = 100;

export interface AcpRun {
  orderMax: number;
  /** The /v2 order and the completions alone, alternated (req/s of each pair, in order). */
  pairs: { order: number; complete: number }[];
  /** Each operation alone, closed loop (10 at a time). */
  ops: Record<Op, OpResult>;
  closed: FlowResult;
  /** Open loop at `rate`, alone and beside the /v2 orders, in alternated rounds (one each). */
  alone: FlowResult[];
  mixed: FlowResult[];
  /** ACP cart flows (create → update) at `rate`, one per round, beside the sessions alone. */
  carts: FlowResult[];
  /** Cart flows closed loop, 10 at a time (the cart routes' warm-up). */
  cartsClosed: FlowResult;
  rate: number;
}

export async function runAcp(quick: boolean, log: (s: string) => void): Promise<AcpRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-bench-acp-'));
  const system = await startEmbeddedSystem(process.env.BENCH_NODE, [], { DATA_DIR: dataDir });
  try {
    const key = await issueBenchKey(system.url, dataDir, 'bench-acp');
    const closedLoop = await closedLoops(system.url, key, quick, log);
    return { ...closedLoop, ...(await openLoops(system.url, key, quick, closedLoop.closed, log)) };
  } finally {
    await system.stop();
  }
}

type ClosedLoops = Pick<AcpRun, 'orderMax' | 'pairs' | 'ops' | 'closed'>;

/** The /v2 order's maximum, each ACP operation alone, the completions' pairs, the flows' maximum. */
async function closedLoops(
  url: string,
  key: string,
  quick: boolean,
  log: (s: string) => void,
): Promise<ClosedLoops> {
  const seconds = quick ? 3 : 10;
  const warmupSeconds = quick ? 1 : 3;
  const orders = { url, requests: orderRequests(), connections: 10 };
  await load({ ...orders, seconds: warmupSeconds });
  const orderMax = (await load({ ...orders, seconds: quick ? 2 : 5 })).rps;
  log(`acp / /v2 order closed loop: ${Math.round(orderMax)} orders/s\n`);

  // Each operation alone: creates make the sessions the updates and the completions use.
  const op = (o: Op, ids?: string[]) =>
    runOp({ url, key, op: o, seconds, concurrency: 10, ...(ids ? { ids } : {}) });
  await runOp({ url, key, op: 'create', seconds: warmupSeconds, concurrency: 10 });
  const create = await op('create');
  const update = await op('update', create.ids.slice(0, 500));
  // Completions alone, alternated with the /v2 order: COMPARE_ROUNDS pairs of a few seconds
  // each, the ratio taken pair by pair (the same minute of the VM, whose speed drifts by a
  // quarter within minutes, and the same store) and its median reported; the completions'
  // row is the median pair's. Each completion takes a session of the create run once.
  const pairs: { order: number; complete: OpResult }[] = [];
  let fresh = create.ids;
  for (let round = 0; round < (quick ? 1 : COMPARE_ROUNDS); round++) {
    const order = (await load({ ...orders, seconds: compareSeconds })).rps;
    const complete = await runOp({
      url,
      key,
      op: 'complete',
      seconds: compareSeconds,
      concurrency: 10,
      ids: fresh,
    });
    fresh = fresh.slice(complete.count);
    pairs.push({ order, complete });
    log(
      `acp / pair ${round + 1}: /v2 order ${Math.round(order)}/s, completions ${Math.round(complete.perSecond)}/s = ${(complete.perSecond / order).toFixed(2)}×\n`,
    );
  }
  const byRatio = [...pairs].sort((a, b) => a.complete.perSecond / a.order - b.complete.perSecond / b.order);
  const complete = (byRatio[byRatio.length >> 1] as (typeof pairs)[number]).complete;
  const ops = {
    create: { ...create, ids: [] },
    update: { ...update, ids: [] },
    complete: { ...complete, ids: [] },
  };
  for (const o of OPS)
    log(
      `acp / ${o} alone, closed loop: ${Math.round(ops[o].perSecond)}/s, p99 ${ops[o].p99.toFixed(2)} ms, ${ops[o].failed} failed${ops[o].failed ? ` ${JSON.stringify(ops[o].failures)}` : ''}\n`,
    );

  const closed = await runFlows({ url, key, seconds, warmupSeconds, concurrency: 10 });
  log(`acp / flows closed loop: ${closed.flowsPerSecond.toFixed(0)} completions/s\n`);
  return {
    orderMax,
    pairs: pairs.map((p) => ({ order: p.order, complete: p.complete.perSecond })),
    ops,
    closed,
  };
}

/**
 * Open loop at half the flows' maximum, in alternated rounds: the checkout flows alone, ACP cart
 * flows (create → update, the same lines) at the same rate, the checkout flows beside /v2
 * orders. The carts run before the sessions in every other round, so neither always meets the
 * step before it.
 */
async function openLoops(
  url: string,
  key: string,
  quick: boolean,
  closed: FlowResult,
  log: (s: string) => void,
): Promise<Pick<AcpRun, 'alone' | 'mixed' | 'carts' | 'cartsClosed' | 'rate'>> {
  const seconds = quick ? 3 : 10;
  const rate = Math.max(1, Math.round(closed.flowsPerSecond * 0.5));
  const alone: FlowResult[] = [];
  const mixed: FlowResult[] = [];
  const carts: FlowResult[] = [];
  const report = (label: string, r: FlowResult, ops: readonly Op[] = OPS) =>
    log(
      `acp / open loop ${rate} flows/s ${label}: ${ops.map((op) => `${op} p99 ${r.ops[op].p99.toFixed(2)} ms${r.ops[op].failed ? ` (${r.ops[op].failed} failed)` : ''}`).join(', ')}\n`,
    );
  const step = { url, key, seconds, warmupSeconds: 2, rate };
  const sessionsAlone = async (round: number) => {
    alone.push(await runFlows(step));
    report(`alone (round ${round})`, alone.at(-1) as FlowResult);
  };
  const cartFlows = async (round: number) => {
    carts.push(await runFlows({ ...step, kind: 'cart' }));
    report(`carts (round ${round})`, carts.at(-1) as FlowResult, CART_OPS);
  };
  // The cart routes' own warm-up (the sessions had theirs in the closed loops): 10 cart flows
  // at a time, whose rate is reported beside the sessions' maximum.
  const cartsClosed = await runFlows({ url, key, seconds: quick ? 2 : 5, concurrency: 10, kind: 'cart' });
  log(`acp / cart flows closed loop: ${cartsClosed.flowsPerSecond.toFixed(0)} flows/s\n`);
  for (let round = 1; round <= (quick ? 1 : 2); round++) {
    if (round % 2) {
      await sessionsAlone(round);
      await cartFlows(round);
    } else {
      await cartFlows(round);
      await sessionsAlone(round);
    }
    mixed.push(await runFlows({ ...step, background: { requests: orderRequests(), rate: ORDERS_BESIDE } }));
    report(`mixed (round ${round})`, mixed.at(-1) as FlowResult);
  }
  return { alone, mixed, carts, cartsClosed, rate };
}

const fmt = (n: number, d = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function acpTable(r: AcpRun): string {
  // The median of the pairs' ratios (each pair: the /v2 order, then completions, same minute).
  const ratios = r.pairs.map((p) => p.complete / p.order).sort((a, b) => a - b);
  const ratio = ratios[ratios.length >> 1] ?? 0;
  const lines = [
    '| load | operation | ops/s | p50 ms | p99 ms | p99.9 ms | failed | p99 goal | met |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const row = (load: string, res: FlowResult, perSecond: number) => {
    for (const op of OPS) {
      const f = res.ops[op];
      const goal = load.startsWith('closed') ? undefined : ACP_GOALS[op as 'create' | 'complete'];
      const met = goal === undefined ? '—' : f.p99 <= goal && f.failed === 0 ? 'yes' : 'no';
      lines.push(
        `| ${load} | ${op} | ${fmt(perSecond, 0)} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(f.p999)} | ${f.failed} | ${goal === undefined ? '—' : `≤ ${goal}`} | ${met} |`,
      );
    }
  };
  for (const op of OPS) {
    const f = r.ops[op];
    lines.push(
      `| closed loop, ${op} alone (10 at a time) | ${op} | ${fmt(f.perSecond, 0)} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(f.p999)} | ${f.failed} | — | — |`,
    );
  }
  row('closed loop, 10 flows at a time', r.closed, r.closed.flowsPerSecond);
  for (const [i, alone] of r.alone.entries()) {
    const round = r.alone.length > 1 ? `, round ${i + 1}` : '';
    row(`open loop, ${r.rate} flows/s (50 %)${round}`, alone, alone.flowsPerSecond);
    const mixed = r.mixed[i];
    if (mixed)
      row(
        `open loop, ${r.rate} flows/s + ${ORDERS_BESIDE} /v2 orders/s${round}`,
        mixed,
        mixed.flowsPerSecond,
      );
  }
  const bgs = r.mixed.flatMap((m) => (m.background ? [m.background] : []));
  const bg = bgs.length
    ? {
        p50: Math.max(...bgs.map((b) => b.p50)),
        p99: Math.max(...bgs.map((b) => b.p99)),
        failed: bgs.reduce((a, b) => a + b.failed, 0),
      }
    : undefined;
  return `${lines.join('\n')}\n\nThe /v2 order in the same run, closed loop (10 connections): ${fmt(r.orderMax, 0)} orders/s on the empty store. Then ${r.pairs.length} pairs, each the /v2 order then ACP completions alone (${r.pairs.map((p) => `${fmt(p.order, 0)} and ${fmt(p.complete, 0)}/s`).join('; ')}): completions **${ratio.toFixed(2)}×** the /v2 order in the median pair (goal ≥ ${ACP_GOALS.throughputRatio}×; the pairs ${ratios.map((x) => x.toFixed(2)).join(', ')}); the completions' row above is that pair's. Whole flows (three requests each) ran at ${fmt(r.closed.flowsPerSecond, 0)}/s, ${fmt(r.closed.flowsPerSecond * 3, 0)} ACP requests/s.${bg ? ` The /v2 orders beside the open-loop flows (the higher round's): p50 ${fmt(bg.p50)} ms, p99 ${fmt(bg.p99)} ms, ${bg.failed} failed.` : ''}`;
}
