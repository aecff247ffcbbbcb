/**
 * What keeps a finished request's objects alive: builds the embedded system in this process
 * (compiled dist/), runs N requests of one load one at a time, writes a heap snapshot at once
 * (the snapshot's own collection frees what nothing holds), counts the objects of the named
 * constructors, and prints the retaining path of a few of them back to a GC root.
 *   npm run build && tsx bench/tools/retainers.ts <rest|graphql> [requests=300] [Constructor …]
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { QUOTE_REQUESTS } from '../../harness/requests.ts';
import { openLoad } from '../open-loop/generator.ts';
import { readSnapshot } from './heap-snapshot.ts';
import { buildQuoteSystemHere } from './support.ts';

const [which = 'rest', countArg = '300', ...names] = process.argv.slice(2);
const wanted = names.length ? names : ['Response', 'Request', 'IncomingMessage', 'ServerResponse'];
const { sys, inject } = await buildQuoteSystemHere('ac-retain-');
const spec = QUOTE_REQUESTS[which as keyof typeof QUOTE_REQUESTS]();
const openRate = Number(process.env.OPEN_RATE ?? 0);
if (openRate > 0) {
  // OPEN_RATE=<req/s>: the snapshot is taken in the middle of a constant-rate HTTP load.
  const url = await sys.listen(0);
  const load = openLoad({ url, primary: { requests: [spec], rate: openRate }, seconds: 6 });
  await new Promise((r) => setTimeout(r, 4000));
  const file = writeHeapSnapshot(join(tmpdir(), `retain-${process.pid}.heapsnapshot`));
  await load;
  report(file);
}
for (let i = 0; i < (openRate > 0 ? 0 : Number(countArg)); i++) await inject(spec);
if (openRate <= 0) report(writeHeapSnapshot(join(tmpdir(), `retain-${process.pid}.heapsnapshot`)));
process.exit(0);

function report(file: string): void {
  const heap = readSnapshot(file);
  for (const name of wanted) {
    const found: number[] = [];
    for (let n = 0; n < heap.count; n++)
      if (heap.typeOf(n) === 'object' && heap.nameOf(n) === name) found.push(n);
    console.log(`\n${name}: ${found.length} alive after ${countArg} requests`);
    for (const n of found.slice(0, 3)) console.log(`  ${heap.retainingPath(n).join('\n    ')}\n    ${name}`);
  }
}
