/**
 * Overload (issue 48): a warm system (ready, then a closed loop measures the REST quote's
 * maximum) takes the quote at half that maximum with 100 agent orders/s beside it (the steady
 * reference), then at 150 % of it with the same orders, open loop, each latency from its due
 * time. With the shedding on, the excess should be answered 503 at once and the accepted
 * requests keep a p99 within 5× their steady one; with it off (SHED_*_BUDGET_MS=0, the system
 * before issue 48) every request waits. Embedded (`npm start`) or distributed (two gateways).
 *   npm run build && [SECONDS=10] tsx bench/tools/overload.ts embedded|distributed [ENV=value ...]
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
}

async function startSystem(
  topology: 'embedded' | 'distributed',
  env: Record<string, string>,
): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const all = { ...SHEDDING_DEFAULTS, ...env };
  if (topology === 'embedded') {
    const sys: ServiceProcess = await startEmbeddedSystem(undefined, [], all);
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
  o: { seconds?: number; max?: number } = {},
): Promise<Overload> {
  const seconds = o.seconds ?? 10;
  const sys = await startSystem(topology, env);
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
    const over = await at(Math.round(max * 1.5));
    return { max, steady, over };
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
  const r = await overload(topology, env, { seconds: Number(process.env.SECONDS ?? 10) });
  const f = (n: number) => n.toFixed(1);
  const s = (x: StreamResult) =>
    `p99 ${f(x.p99)} ms, accepted p99 ${f(x.accepted.p99)} ms, shed ${x.shed}/${x.sent} (${f((100 * x.shed) / Math.max(1, x.sent))} %), other bad ${x.non2xx - x.shed + x.errors}`;
  console.log(`${topology} ${JSON.stringify(env)}: closed-loop max ${Math.round(r.max)} quotes/s`);
  console.log(`  50 % + 100 orders/s: quote ${s(r.steady.quote)}; orders ${s(r.steady.orders)}`);
  console.log(`  150 % + 100 orders/s: quote ${s(r.over.quote)}; orders ${s(r.over.orders)}`);
  console.log(
    `  accepted p99 at 150 % ÷ steady p99: quote ${f(r.over.quote.accepted.p99 / r.steady.quote.p99)}×, orders ${f(r.over.orders.accepted.p99 / r.steady.orders.p99)}×`,
  );
}
