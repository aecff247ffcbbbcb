/**
 * The mixed group of `npm run bench -- --only mixed` (issue 29): agent orders beside the quotes,
 * on the embedded system and on the distributed topology (two gateways, the load spread over
 * both). Per topology, for the REST and the GraphQL cart quote: the closed-loop maximum (10
 * connections over all gateways), then at 25 % and 50 % of it, open loop, in alternated steps:
 *
 *   alone           the quote at that rate;
 *   + orders        the same, with 100 agent orders/s beside it;
 *   control         a bare node:http route in its own process at that rate;
 *   control + orders  the bare route at that rate while the system takes the same 100 orders/s.
 *
 * And 100 orders/s alone. Goals: the quote's p99 with orders ≤ 1.5× its p99 alone; the orders'
 * p99 beside it ≤ 25 ms. `rounds` repeats the whole alternation, so drift shows as a spread.
 */
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import type { ServiceProcess } from '../../harness/processes.ts';
import { orderRequests } from '../../harness/requests.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { load } from '../loadgen.ts';
import { startDistributedBench } from './distributed.ts';
import { openLoad, type StreamResult } from './generator.ts';
import { requestsOf, startBare } from './run.ts';

export type Topology = 'embedded' | 'distributed';
const PATHS = [
  { key: 'rest', name: 'REST quote' },
  { key: 'graphql', name: 'GraphQL quote' },
] as const;
const FRACTIONS = [0.25, 0.5];
const ORDERS = 100;
const LOADS = ['alone', 'mixed', 'control', 'control+orders'] as const;

export interface MixedStep {
  topology: Topology;
  path: 'rest' | 'graphql' | 'order';
  load: (typeof LOADS)[number];
  fraction: number;
  rate: number;
  round: number;
  result: StreamResult;
  orders?: StreamResult;
}

export interface MixedRun {
  maxima: Record<string, number>;
  steps: MixedStep[];
  load: string[];
}

/** Closed-loop maximum over several replicas: 10 connections shared among them, after a warm-up. */
async function closedMaxOver(urls: string[], requests: HttpRequestSpec[], quick: boolean): Promise<number> {
  const each = Math.max(1, Math.round(10 / urls.length));
  const run = (seconds: number) =>
    Promise.all(urls.map((url) => load({ url, requests, connections: each, seconds })));
  await run(quick ? 1 : 3);
  return (await run(quick ? 2 : 5)).reduce((a, r) => a + r.rps, 0);
}

async function start(topology: Topology): Promise<{ urls: string[]; stop(): Promise<void> }> {
  if (topology === 'embedded') {
    const sys: ServiceProcess = await startEmbeddedSystem();
    return { urls: [sys.url], stop: () => sys.stop().then(() => {}) };
  }
  const d = await startDistributedBench();
  await d.startGateways();
  return { urls: d.urls, stop: () => d.stop() };
}

const loadavg = async () =>
  (await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

export async function runMixed(
  quick: boolean,
  log: (s: string) => void,
  o: { topologies?: Topology[]; rounds?: number } = {},
): Promise<MixedRun> {
  const seconds = quick ? 3 : 10;
  const rounds = o.rounds ?? (quick ? 1 : 2);
  const bare = await startBare();
  const run: MixedRun = { maxima: {}, steps: [], load: [] };
  try {
    for (const topology of o.topologies ?? ['embedded', 'distributed']) {
      const sys = await start(topology);
      run.load.push(`${topology} start ${await loadavg()}`);
      try {
        const rates: Record<string, number> = {};
        for (const p of PATHS) {
          const max = await closedMaxOver(sys.urls, requestsOf(p.key)(), quick);
          run.maxima[`${topology}/${p.key}`] = max;
          rates[p.key] = max;
          log(`mixed / ${topology} ${p.name}: closed-loop max ${Math.round(max)} req/s\n`);
        }
        for (let round = 1; round <= rounds; round++) {
          const orders = await openLoad({
            url: sys.urls[0] as string,
            primary: { requests: orderRequests(), rate: ORDERS, urls: sys.urls },
            seconds,
            warmupSeconds: quick ? 1 : 2,
          });
          run.steps.push({
            topology,
            path: 'order',
            load: 'alone',
            fraction: 0,
            rate: ORDERS,
            round,
            result: orders.primary,
          });
          log(`  ${topology} round ${round} orders alone: p99 ${orders.primary.p99.toFixed(2)} ms\n`);
          for (const p of PATHS) {
            for (const fraction of FRACTIONS) {
              const rate = Math.max(1, Math.round((rates[p.key] ?? 0) * fraction));
              for (const kind of LOADS) {
                const control = kind.startsWith('control');
                const r = await openLoad({
                  url: bare.url,
                  primary: {
                    requests: control ? [{ path: '/bare' }] : requestsOf(p.key)(),
                    rate,
                    urls: control ? [bare.url] : sys.urls,
                  },
                  ...(kind === 'mixed' || kind === 'control+orders'
                    ? { background: { requests: orderRequests(), rate: ORDERS, urls: sys.urls } }
                    : {}),
                  seconds,
                  warmupSeconds: quick ? 1 : 2,
                });
                run.steps.push({
                  topology,
                  path: p.key,
                  load: kind,
                  fraction,
                  rate,
                  round,
                  result: r.primary,
                  ...(r.background ? { orders: r.background } : {}),
                });
                log(
                  `  ${topology} round ${round} ${p.key} ${kind} at ${fraction * 100} % (${rate}/s): p99 ${r.primary.p99.toFixed(2)} ms${r.background ? `, orders p99 ${r.background.p99.toFixed(2)} ms` : ''}\n`,
                );
              }
            }
          }
        }
      } finally {
        run.load.push(`${topology} end ${await loadavg()}`);
        await sys.stop();
      }
    }
  } finally {
    await bare.stop();
  }
  return run;
}

const f = (n: number, d = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function mixedTable(run: MixedRun): string {
  const lines = [
    '| topology | path | round | offered req/s (share of max) | p99 alone | p99 + 100 orders/s | ratio (goal ≤ 1.5) | orders p99 beside (goal ≤ 25) | control p99 alone / + orders | bad answers | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const find = (s: Omit<MixedStep, 'result' | 'orders' | 'rate'>) =>
    run.steps.find(
      (x) =>
        x.topology === s.topology &&
        x.path === s.path &&
        x.load === s.load &&
        x.fraction === s.fraction &&
        x.round === s.round,
    );
  for (const topology of ['embedded', 'distributed'] as const) {
    for (const p of PATHS) {
      for (const fraction of FRACTIONS) {
        for (const round of [...new Set(run.steps.map((s) => s.round))]) {
          const k = { topology, path: p.key, fraction, round };
          const alone = find({ ...k, load: 'alone' });
          const mixed = find({ ...k, load: 'mixed' });
          const control = find({ ...k, load: 'control' });
          const controlOrders = find({ ...k, load: 'control+orders' });
          if (!alone || !mixed) continue;
          const ratio = mixed.result.p99 / alone.result.p99;
          const bad = [alone.result, mixed.result, mixed.orders]
            .filter((r): r is StreamResult => r !== undefined)
            .reduce((n, r) => n + r.non2xx + r.errors, 0);
          const ordersP99 = mixed.orders?.p99 ?? Number.NaN;
          const met = ratio <= 1.5 && ordersP99 <= 25 && bad === 0 ? 'yes' : 'no';
          lines.push(
            `| ${topology} | ${p.name} | ${round} | ${f(alone.rate, 0)} (${fraction * 100} %) | ${f(alone.result.p99)} | ${f(mixed.result.p99)} | ${ratio.toFixed(2)}× | ${f(ordersP99)} | ${control ? f(control.result.p99) : '—'} / ${controlOrders ? f(controlOrders.result.p99) : '—'} | ${bad} | ${met} |`,
          );
        }
      }
    }
    const orders = run.steps.filter((s) => s.topology === topology && s.path === 'order');
    if (orders.length)
      lines.push(
        `| ${topology} | agent orders alone | ${orders.map((s) => s.round).join(', ')} | ${ORDERS} | ${orders.map((s) => f(s.result.p99)).join(', ')} | — | — | — | — | ${orders.reduce((n, s) => n + s.result.non2xx + s.result.errors, 0)} | — |`,
      );
  }
  const maxima = Object.entries(run.maxima)
    .map(([k, v]) => `${k} ${f(v, 0)}`)
    .join('; ');
  return `${lines.join('\n')}\n\nClosed-loop maxima of this run (req/s, 10 connections over all gateways): ${maxima}. Load average (1, 5, 15 min): ${run.load.join('; ')}.`;
}
