/**
 * The mixed load of issue 29 in one short run, for trying a change: the embedded system
 * (compiled, `npm start`'s flags), the REST quote's closed-loop maximum, then open loop at a
 * share of it (FRACTION, 0.5 by default) alone, with 100 agent orders/s beside it, and the
 * orders alone; p50/p99 of each stream from its due time.
 *   npm run build && [FRACTION=0.5] [SECONDS=10] [PATH_KEY=rest] [ROUNDS=1] tsx bench/tools/mixed.ts [ENV=value ...]
 * Arguments of the form NAME=value are given to the system's environment (e.g.
 * EMBEDDED_DB_THREAD=main), so two settings can be compared in one sitting.
 */
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { orderRequests } from '../../harness/requests.ts';
import { openLoad } from '../open-loop/generator.ts';
import { closedMax, requestsOf } from '../open-loop/run.ts';

const fraction = Number(process.env.FRACTION ?? 0.5);
const seconds = Number(process.env.SECONDS ?? 10);
const rounds = Number(process.env.ROUNDS ?? 1);
const key = process.env.PATH_KEY ?? 'rest';
const env = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.includes('='))
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);
const sys = await startEmbeddedSystem(undefined, [], env);
const fmt = (r: { p50: number; p99: number; achieved: number; non2xx: number; errors: number }) =>
  `p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms (${r.achieved.toFixed(0)}/s, ${r.non2xx + r.errors} bad)`;
try {
  const requests = requestsOf(key)();
  const max = await closedMax(sys.url, requests, false);
  const rate = Math.round(max * fraction);
  console.log(
    `${key}: closed-loop max ${max.toFixed(0)}/s; open loop at ${rate}/s; env ${JSON.stringify(env)}`,
  );
  for (let round = 0; round < rounds; round++) {
    const alone = await openLoad({ url: sys.url, primary: { requests, rate }, seconds, warmupSeconds: 2 });
    console.log(`  ${key} alone:          ${fmt(alone.primary)}`);
    const mixed = await openLoad({
      url: sys.url,
      primary: { requests, rate },
      background: { requests: orderRequests(), rate: 100 },
      seconds,
      warmupSeconds: 2,
    });
    console.log(`  ${key} with orders:    ${fmt(mixed.primary)}`);
    if (mixed.background) console.log(`  orders beside ${key}: ${fmt(mixed.background)}`);
    const orders = await openLoad({
      url: sys.url,
      primary: { requests: orderRequests(), rate: 100 },
      seconds,
      warmupSeconds: 2,
    });
    console.log(`  orders alone:        ${fmt(orders.primary)}`);
  }
} finally {
  await sys.stop();
}
