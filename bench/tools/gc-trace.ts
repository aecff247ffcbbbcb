/**
 * Where the quote's tail goes: starts the compiled embedded system with `--trace-gc`, loads it
 * like bench/tools/profile.ts, and prints the collections' count and pause time by kind.
 *   npm run build && tsx bench/tools/gc-trace.ts <graphql|rest> [seconds=10]
 */

import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { load } from '../loadgen.ts';
import { extraNodeFlags, gcPauses, quoteRequest } from './support.ts';

const [which = 'graphql', secondsArg = '10'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const sys = await startEmbeddedSystem(undefined, ['--trace-gc', ...extraNodeFlags()]);
const spec = quoteRequest(which);
const one = await fetch(sys.url + spec.path, { method: spec.method, headers: spec.headers, body: spec.body });
console.log(`reply: ${one.status}, ${(await one.text()).length} bytes`);
await load({ url: sys.url, requests: [spec], connections: 10, seconds: 3 });
const mark = sys.output().length;
const r = await load({
  url: sys.url,
  requests: [spec],
  connections: Number(process.env.CONNS ?? 10),
  seconds: Number(secondsArg),
});
const lines = sys.output().slice(mark).split('\n');
await sys.stop();
console.log(
  `${which}: ${Math.round(r.rps)} req/s, ${r.requests} requests, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`,
);
for (const line of gcPauses(lines)) console.log(line);
const sample = lines.filter((l) => /Mark-Compact/.test(l)).slice(0, 3);
console.log(sample.join('\n'));
