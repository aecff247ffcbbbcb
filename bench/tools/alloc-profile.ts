/**
 * Where a request's garbage comes from: builds the embedded system in this process (compiled
 * dist/, the way npm start runs it), injects one load N times under the inspector's sampling heap
 * profiler with the objects minor and major collections freed included, and prints bytes
 * allocated per request by function (self) and by the nearest frame of our own code; before
 * that, the CPU and wall time per request of the same requests without the sampler.
 *   npm run build && [SURVIVORS=1] [OPEN_RATE=700] tsx bench/tools/alloc-profile.ts <graphql|rest> [requests=2000]
 * Written here because --heap-prof leaves out what the collector already freed, which is
 * exactly a request's garbage.
 */
import { Session } from 'node:inspector/promises';
import { QUOTE_REQUESTS } from '../../harness/requests.ts';
import { openLoad } from '../open-loop/generator.ts';
import { buildQuoteSystemHere } from './support.ts';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  id: number;
  children: SampleNode[];
}

const [which = 'graphql', countArg = '2000'] = process.argv.slice(2);
const count = Number(countArg);
const openRate = Number(process.env.OPEN_RATE ?? 0);
const { sys, inject } = await buildQuoteSystemHere('ac-alloc-', { EMBEDDED_DB: 'disk' });
const request = QUOTE_REQUESTS[which as keyof typeof QUOTE_REQUESTS];
if (!request) throw new Error(`unknown load ${which}`);
const spec = request();
const once = () => inject(spec);
for (let i = 0; i < 3000; i++) {
  const r = await once();
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body}`);
}
// Time first, without the sampler: CPU and wall time per request, one request at a time.
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
for (let i = 0; i < count; i++) await once();
const cpu = process.cpuUsage(cpu0);
const perRequest = (x: number) => (x / count).toFixed(3);
console.log(
  `${which}: ${perRequest(performance.now() - wall0)} ms wall, ${perRequest((cpu.user + cpu.system) / 1000)} ms CPU per request (in process, one at a time)`,
);
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  // SURVIVORS=1: only what outlived a young-generation collection (promoted, then freed by a
  // full one, or still live): the garbage that drives full collections.
  includeObjectsCollectedByMinorGC: process.env.SURVIVORS !== '1',
} as never);
if (openRate > 0) {
  // OPEN_RATE=<req/s>: the load arrives over real HTTP at a constant rate (the open-loop
  // generator in a worker thread, its own isolate), `count` requests in all, so what outlives a
  // young-generation collection is what a served load keeps, not an artefact of one-at-a-time.
  const url = await sys.listen(0);
  await openLoad({ url, primary: { requests: [spec], rate: openRate }, seconds: count / openRate });
} else for (let i = 0; i < count; i++) await once();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
  profile: { head: SampleNode };
};
await sys.close?.();

const self = new Map<string, number>();
const ours = new Map<string, number>();
let total = 0;
const name = (f: SampleNode['callFrame']) =>
  `${f.functionName || '(anonymous)'}  ${f.url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^file:\/\//, '')}:${f.lineNumber + 1}`;
const walk = (n: SampleNode, ourFrame: string) => {
  const f = n.callFrame;
  const isOurs = f.url.includes('/dist/') && !f.url.includes('node_modules');
  const here = isOurs ? name(f) : ourFrame;
  if (n.selfSize) {
    total += n.selfSize;
    self.set(name(f), (self.get(name(f)) ?? 0) + n.selfSize);
    ours.set(here, (ours.get(here) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, here);
};
walk(profile.head, '(outside our code)');
const top = (m: Map<string, number>, k = 25) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([n, b]) => `${(b / count / 1024).toFixed(1).padStart(7)} KB  ${n}`)
    .join('\n');
console.log(`${which}: ${(total / count / 1024).toFixed(1)} KB allocated per request\n`);
console.log(`by function (self)\n${top(self)}\n`);
console.log(`by nearest frame of our code\n${top(ours)}`);
process.exit(0);
