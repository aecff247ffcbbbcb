/**
 * Overload (issue 48): a warm system (ready, then a closed loop measures the REST quote's
 * maximum) takes the quote at half that maximum with 100 agent orders/s beside it (the steady
 * reference), then at 150 % of it with the same orders, open loop, each latency from its due
 * time. With the shedding on, the excess should be answered 503 at once and the accepted
 * requests keep a p99 within 5× their steady one; with it off (SHED_*_BUDGET_MS=0, the system
 * before issue 48) every request waits. Embedded (`npm start`) or distributed (two gateways).
 *   npm run build && [SECONDS=10] [TREE=<checkout>] tsx bench/tools/overload.ts embedded|distributed [ENV=value ...]
 * TREE starts another checkout's dist/ (embedded only): an A/B of two builds in one sitting;
 * MAX=<req/s> skips the closed loop and takes that as the maximum (the same load for both).
 */
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import type { ServiceProcess } from '../../harness/processes.ts';
import { orderRequests } from '../../harness/requests.ts';
import { startDistributedBench, untilReady } from '../open-loop/distributed.ts';
import { openLoad, type StreamResult } from '../open-loop/generator.ts';
import { closedMax, requestsOf } from '../open-loop/run.ts';
import { SHEDDING_DEFAULTS } from './warm-start.ts';

export interface Overload {
  /** The REST quote's closed-loop maximum on this start (req/s). */
  max: number;
  steady: { quote: StreamResult; orders: StreamResult };
  over: { quote: StreamResult; orders: StreamResult };
  /** The adaptive shedding's gauges (limit, budget, baseline per class) right after the 150 % step. */
  limits: string[];
  /**
   * The 150 % step's quotes answered 200, by their time inside the process (Fastify's elapsed
   * time, from the first hook: the gate's wait and the service, not the socket's or the loop's
   * wait before), as the share at or under each bucket of http_request_duration_seconds. Less
   * moved by other processes than the client's latency: it is the part the gate bounds.
   */
  served: Record<string, number>;
}

/** Each `le` bucket's count of 200 answers (every route but /metrics) in a /metrics text. */
async function servedBuckets(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('http_request_duration_seconds_bucket{')) continue;
    if (!line.includes('status="200"') || line.includes('route="/metrics"')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) out.set(le, (out.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

async function startSystem(
  topology: 'embedded' | 'distributed',
  env: Record<string, string>,
  tree?: string,
): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const all = { ...SHEDDING_DEFAULTS, ...env };
  if (topology === 'embedded') {
    const sys: ServiceProcess = await startEmbeddedSystem(undefined, [], all, undefined, tree);
    await untilReady(`${sys.url}/readyz`);
    return {
      urls: [sys.url],
      stop: async () => {
        await sys.stop();
      },
    };
  }
  const bench = await startDistributedBench({ env: all });
  try {
    const gateways = await bench.startGateways({ env: all });
    await Promise.all(gateways.map((g) => untilReady(`${g.url}/readyz`)));
    return { urls: gateways.map((g) => g.url), stop: () => bench.stop() };
  } catch (err) {
    await bench.stop();
    throw err;
  }
}

export async function overload(
  topology: 'embedded' | 'distributed',
  env: Record<string, string> = {},
  o: { seconds?: number; max?: number; tree?: string } = {},
): Promise<Overload> {
  const seconds = o.seconds ?? 10;
  const sys = await startSystem(topology, env, o.tree);
  try {
    const quotes = requestsOf('rest')();
    const max = o.max ?? (await closedMax(sys.urls[0] as string, quotes, false));
    const at = async (rate: number) => {
      const r = await openLoad({
        url: sys.urls[0] as string,
        primary: { requests: quotes, rate, urls: sys.urls },
        background: { requests: orderRequests(), rate: 100, urls: sys.urls },
        seconds,
        warmupSeconds: 2,
      });
      return { quote: r.primary, orders: r.background as StreamResult };
    };
    const steady = await at(Math.round(max / 2));
    const before = await servedBuckets(sys.urls[0] as string);
    const over = await at(Math.round(max * 1.5));
    const after = await servedBuckets(sys.urls[0] as string);
    const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
    const served = Object.fromEntries(
      [...after].map(([le, n]) => [le, (n - (before.get(le) ?? 0)) / Math.max(1, total)]),
    );
    const metrics = await (await fetch(`${sys.urls[0]}/metrics`)).text();
    const limits = metrics
      .split('\n')
      .filter((l) => /^http_(concurrency_limit|queue_budget_seconds|service_baseline_seconds)\{/.test(l));
    return { max, steady, over, limits, served };
  } finally {
    await sys.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const topology = (process.argv[2] as 'embedded' | 'distributed' | undefined) ?? 'embedded';
  const env = Object.fromEntries(
    process.argv
      .slice(3)
      .filter((a) => a.includes('='))
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
  const r = await overload(topology, env, {
    seconds: Number(process.env.SECONDS ?? 10),
    ...(process.env.TREE ? { tree: process.env.TREE } : {}),
    // A fixed "maximum" instead of the closed loop's: both builds of an A/B get the same load.
    ...(process.env.MAX ? { max: Number(process.env.MAX) } : {}),
  });
  const f = (n: number) => n.toFixed(1);
  const s = (x: StreamResult) =>
    `p99 ${f(x.p99)} ms, accepted p99 ${f(x.accepted.p99)} ms, shed ${x.shed}/${x.sent} (${f((100 * x.shed) / Math.max(1, x.sent))} %), other bad ${x.non2xx - x.shed + x.errors}`;
  console.log(`${topology} ${JSON.stringify(env)}: closed-loop max ${Math.round(r.max)} quotes/s`);
  console.log(`  50 % + 100 orders/s: quote ${s(r.steady.quote)}; orders ${s(r.steady.orders)}`);
  console.log(`  150 % + 100 orders/s: quote ${s(r.over.quote)}; orders ${s(r.over.orders)}`);
  console.log(
    `  accepted p99 at 150 % ÷ steady p99: quote ${f(r.over.quote.accepted.p99 / r.steady.quote.p99)}×, orders ${f(r.over.orders.accepted.p99 / r.steady.orders.p99)}×`,
  );
  if (r.limits.length > 0) console.log(`  after 150 %: ${r.limits.join('; ')}`);
  console.log(
    `  150 %, 200s by time in the process (share ≤ bucket): ${Object.entries(r.served)
      .map(([le, x]) => `≤${le} s ${(100 * x).toFixed(1)} %`)
      .join(', ')}`,
  );
}
