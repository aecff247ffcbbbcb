/**
 * The warm start of the distributed topology (issue 29): the three subgraph processes start
 * first (fresh Postgres schema, the machine's Redis) and the gateways only once each subgraph
 * answers /readyz 200 (a Service routes only to ready pods); then two gateway replicas start
 * at once, and from the moment both answer ready the REST quote at RATE/s and 100 agent orders/s,
 * spread over both, are measured for SECONDS, every request counted (until then the load runs
 * against a bare route, so the generator's own start is over). Then the same load again as the
 * steady reference. `WARM_UP_MS` goes to every process.
 *   npm run build && [RATE=150] [SECONDS=10] [PATH_KEY=rest] tsx bench/tools/warm-start-distributed.ts [ENV=value ...]
 */
import { orderRequests } from '../../harness/requests.ts';
import { startDistributedBench } from '../open-loop/distributed.ts';
import { openLoad, type StreamResult } from '../open-loop/generator.ts';
import { requestsOf, startBare } from '../open-loop/run.ts';
import { machineSampler } from './support.ts';
import {
  freePort,
  perSecondOf,
  SHEDDING_DEFAULTS,
  shareText,
  type WarmStart,
  windowOf,
} from './warm-start.ts';

const key = process.env.PATH_KEY ?? 'rest';

export async function warmStartDistributed(
  env: Record<string, string> = {},
  o: { rate?: number; seconds?: number } = {},
): Promise<WarmStart> {
  const rate = o.rate ?? Number(process.env.RATE ?? 150);
  const seconds = o.seconds ?? Number(process.env.SECONDS ?? 10);
  const bare = await startBare();
  const bench = await startDistributedBench({ env: { ...SHEDDING_DEFAULTS, ...env } });
  const machine = machineSampler();
  try {
    const ports = [await freePort(), await freePort()];
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const load = (untilReady: boolean) =>
      openLoad({
        url: urls[0] as string,
        primary: { requests: requestsOf(key)(), rate, urls },
        background: { requests: orderRequests(), rate: 100, urls },
        seconds,
        samples: true,
        ...(untilReady
          ? { untilReady: { readyUrl: urls.map((u) => `${u}/readyz`), warmupUrl: bare.url } }
          : {}),
      });
    const first = load(true);
    const started = Date.now();
    await bench.startGateways({ ports, env: { ...SHEDDING_DEFAULTS, ...env } });
    const listeningMs = Date.now() - started;
    const cold = await first;
    const steady = await load(false);
    return {
      listeningMs,
      readyMs: cold.measuredFrom - started,
      first: { primary: cold.primary, orders: cold.background as StreamResult },
      steady: { primary: steady.primary, orders: steady.background as StreamResult },
      machine: { first: windowOf(cold, seconds, machine), steady: windowOf(steady, seconds, machine) },
      perSecond: perSecondOf(cold, machine),
    };
  } finally {
    machine.stop();
    await bench.stop();
    await bare.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const extra = Object.fromEntries(
    process.argv
      .slice(2)
      .filter((a) => a.includes('='))
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
  const r = await warmStartDistributed(extra);
  const f = (n: number) => n.toFixed(2);
  console.log(`gateways listening after ${r.listeningMs} ms, both ready after ${r.readyMs.toFixed(0)} ms`);
  console.log(
    `first: ${key} p99 ${f(r.first.primary.p99)} (max ${f(r.first.primary.max)}), orders p99 ${f(r.first.orders.p99)} (max ${f(r.first.orders.max)}); bad ${r.first.primary.non2xx + r.first.primary.errors} / ${r.first.orders.non2xx + r.first.orders.errors}`,
  );
  console.log(`steady: ${key} p99 ${f(r.steady.primary.p99)}, orders p99 ${f(r.steady.orders.p99)}`);
  console.log(`machine: first ${shareText(r.machine.first)}, steady ${shareText(r.machine.steady)}`);
  for (const s of r.perSecond)
    console.log(
      `  second ${s.second}: ${key} p99 ${f(s.primaryP99)} ms, orders p99 ${f(s.ordersP99)} ms, shed ${s.primaryShed}/${s.primarySent} and ${s.ordersShed}/${s.ordersSent}, machine ${shareText(s.machine)}`,
    );
}
