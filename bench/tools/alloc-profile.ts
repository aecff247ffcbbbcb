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
import { allocations, type SampleNode, topAllocations } from './heap-sampling.ts';
import { buildQuoteSystemHere } from './support.ts';

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

const a = allocations(profile.head);
console.log(`${which}: ${(a.total / count / 1024).toFixed(1)} KB allocated per request\n`);
console.log(`by function (self)\n${topAllocations(a.self, count)}\n`);
console.log(`by nearest frame of our code\n${topAllocations(a.ours, count)}`);
process.exit(0);
