/**
 * The open-loop group of `npm run bench` (`-- --only open-loop`): latency as a user feels it
 * below saturation. For each path of the embedded system (`npm start`'s compiled process):
 *
 *   1. its closed-loop maximum (10 connections, after a warm-up), measured in this run;
 *   2. a constant arrival rate at 25 %, 50 % and 75 % of that maximum, latency from each
 *      request's due time (p50, p99, p99.9), alone and with 100 agent orders/s beside it;
 *   3. the same rates against a bare node:http route in its own process: the control, showing
 *      what the generator and the machine add by themselves.
 *
 * Goals (issue 20), embedded, p99 at 50 % of the path's maximum: REST quote ≤ 5 ms, GraphQL
 * quote ≤ 10 ms, price HIT ≤ 2 ms, agent order ≤ 20 ms; at 75 %, at most twice those; the same
 * in the mixed load.
 */
import { spawnSync } from 'node:child_process';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { type ServiceProcess, startCommand } from '../../harness/processes.ts';
import { orderRequests, priceRequests, QUOTE_REQUESTS } from '../../harness/requests.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { load } from '../loadgen.ts';
import { type OpenLoadResult, openLoad, type StreamResult } from './generator.ts';

export const FRACTIONS = [0.25, 0.5, 0.75] as const;
const ORDERS_BESIDE = 100;

export interface Path {
  key: 'rest' | 'graphql' | 'price' | 'order';
  name: string;
  /** p99 goal in ms at 50 % of the maximum (twice that at 75 %). */
  goal: number;
  requests: () => HttpRequestSpec[];
  /** Whether the mixed load (orders beside) applies: not to the order path itself. */
  mixed: boolean;
}

export const PATHS: Path[] = [
  {
    key: 'rest',
    name: 'REST GET /cart/quote (10 lines)',
    goal: 5,
    requests: () => [QUOTE_REQUESTS.rest()],
    mixed: true,
  },
  {
    key: 'graphql',
    name: 'GraphQL cartQuote (10 lines)',
    goal: 10,
    requests: () => [QUOTE_REQUESTS.graphql()],
    mixed: true,
  },
  { key: 'price', name: 'price HIT', goal: 2, requests: priceRequests, mixed: true },
  { key: 'order', name: 'agent order (embedded store)', goal: 20, requests: orderRequests, mixed: false },
];

/**
 * The requests of a path by its key, for the profiling tools; `health` is GET /healthz, the
 * server's floor (Fastify and node:http without our work).
 */
export function requestsOf(key: string): () => HttpRequestSpec[] {
  if (key === 'health') return () => [{ method: 'GET', path: '/healthz' }];
  const path = PATHS.find((p) => p.key === key);
  if (!path) throw new Error(`unknown path ${key} (rest, graphql, price, order or health)`);
  return path.requests;
}

export interface Step {
  path: Path['key'];
  load: 'alone' | 'mixed' | 'control';
  fraction: number;
  result: StreamResult;
  background?: StreamResult;
}

export interface OpenLoopRun {
  node: string;
  maxima: Record<Path['key'], number>;
  steps: Step[];
}

/** The version of the Node binary the system under test runs on. */
export const nodeVersion = (node?: string): string =>
  node ? spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim() : process.version;

/** A bare node:http JSON route in its own process: the control. */
export function startBare(node?: string): Promise<ServiceProcess> {
  const code = `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}'); }); }).listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ msg: 'listening on http://127.0.0.1:' + this.address().port })); });`;
  return startCommand('bare node:http', node ?? process.execPath, ['-e', code], {});
}

/** Closed-loop maximum of one path: 10 connections, after a warm-up. */
export async function closedMax(url: string, requests: HttpRequestSpec[], quick: boolean): Promise<number> {
  const opts = { url, requests, connections: 10 };
  await load({ ...opts, seconds: quick ? 1 : 3 });
  return (await load({ ...opts, seconds: quick ? 2 : 5 })).rps;
}

export async function runOpenLoop(quick: boolean, log: (s: string) => void): Promise<OpenLoopRun> {
  const seconds = quick ? 3 : 10;
  const node = process.env.BENCH_NODE;
  const system = await startEmbeddedSystem(node);
  const bare = await startBare(node);
  const maxima = {} as OpenLoopRun['maxima'];
  const steps: Step[] = [];
  try {
    for (const path of PATHS) {
      const requests = path.requests();
      maxima[path.key] = await closedMax(system.url, requests, quick);
      log(`open-loop / ${path.name}: closed-loop max ${Math.round(maxima[path.key])} req/s\n`);
      const loads: Step['load'][] = path.mixed ? ['alone', 'mixed', 'control'] : ['alone', 'control'];
      for (const fraction of FRACTIONS) {
        const rate = Math.max(1, Math.round(maxima[path.key] * fraction));
        for (const kind of loads) {
          const r: OpenLoadResult = await openLoad({
            url: kind === 'control' ? bare.url : system.url,
            primary: { requests: kind === 'control' ? [{ path: '/bare' }] : requests, rate },
            ...(kind === 'mixed' ? { background: { requests: orderRequests(), rate: ORDERS_BESIDE } } : {}),
            seconds,
            warmupSeconds: quick ? 1 : 2,
          });
          steps.push({
            path: path.key,
            load: kind,
            fraction,
            result: r.primary,
            ...(r.background ? { background: r.background } : {}),
          });
          log(
            `  ${kind} at ${Math.round(fraction * 100)} % (${rate}/s): p50 ${r.primary.p50.toFixed(2)} p99 ${r.primary.p99.toFixed(2)} p99.9 ${r.primary.p999.toFixed(2)} ms\n`,
          );
        }
      }
    }
  } finally {
    await system.stop();
    await bare.stop();
  }
  return { node: nodeVersion(node), maxima, steps };
}

const fmt = (n: number, d = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The goal of a step's p99, in ms: the path's goal at 50 %, twice it at 75 %, none at 25 %. */
export function goalOf(path: Path, fraction: number): number | undefined {
  if (fraction === 0.5) return path.goal;
  if (fraction === 0.75) return path.goal * 2;
  return undefined;
}

export function openLoopTable(run: OpenLoopRun): string {
  const lines = [
    '| path | load | offered req/s (share of max) | achieved req/s | p50 ms | p99 ms | p99.9 ms | control p99 ms | p99 goal | met |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const path of PATHS) {
    for (const kind of ['alone', 'mixed'] as const) {
      for (const fraction of FRACTIONS) {
        const step = run.steps.find((s) => s.path === path.key && s.load === kind && s.fraction === fraction);
        if (!step) continue;
        const control = run.steps.find(
          (s) => s.path === path.key && s.load === 'control' && s.fraction === fraction,
        );
        const goal = goalOf(path, fraction);
        const r = step.result;
        const met = goal === undefined ? '—' : r.p99 <= goal && r.errors === 0 ? 'yes' : 'no';
        const label = kind === 'mixed' ? `+ ${ORDERS_BESIDE} orders/s` : 'alone';
        lines.push(
          `| ${path.name} | ${label} | ${fmt(r.offered, 0)} (${fraction * 100} %) | ${fmt(r.achieved, 0)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.p999)} | ${control ? fmt(control.result.p99) : '—'} | ${goal === undefined ? '—' : `≤ ${goal}`} | ${met} |`,
        );
      }
    }
  }
  const maxima = PATHS.map((p) => `${p.name} ${fmt(run.maxima[p.key] ?? 0, 0)}`).join('; ');
  return `${lines.join('\n')}\n\nClosed-loop maxima of this run (req/s, 10 connections): ${maxima}.`;
}
