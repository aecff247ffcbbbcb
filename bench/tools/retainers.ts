/**
 * What keeps a finished request's objects alive: builds the embedded system in this process
 * (compiled dist/), runs N requests of one load one at a time, writes a heap snapshot at once
 * (the snapshot's own collection frees what nothing holds), counts the objects of the named
 * constructors, and prints the retaining path of a few of them back to a GC root.
 *   npm run build && tsx bench/tools/retainers.ts <rest|graphql> [requests=300] [Constructor …]
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { openLoad } from '../open-loop/generator.ts';
import { QUOTE_REQUESTS } from '../scenarios/quote.ts';
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

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}
function report(file: string): void {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const nf = s.snapshot.meta.node_fields.length;
  const ef = s.snapshot.meta.edge_fields.length;
  const [nodeTypes] = s.snapshot.meta.node_types;
  const [edgeTypes] = s.snapshot.meta.edge_types;
  const count = s.nodes.length / nf;
  const nameOf = (n: number) => s.strings[s.nodes[n * nf + 1] as number] as string;
  const typeOf = (n: number) => nodeTypes[s.nodes[n * nf] as number];
  // Reverse edges: for each node, who points at it and by what name.
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++)
    firstEdge[n + 1] = (firstEdge[n] as number) + (s.nodes[n * nf + 4] as number);
  const back: { from: number; edge: string }[][] = Array.from({ length: count }, () => []);
  for (let n = 0; n < count; n++)
    for (let e = firstEdge[n] as number; e < (firstEdge[n + 1] as number); e++) {
      const type = edgeTypes[s.edges[e * ef] as number];
      if (type === 'weak') continue;
      const nameOrIndex = s.edges[e * ef + 1] as number;
      const to = (s.edges[e * ef + 2] as number) / nf;
      const label =
        type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : (s.strings[nameOrIndex] ?? '?');
      back[to]?.push({ from: n, edge: `${type}:${label}` });
    }
  for (const name of wanted) {
    const ids: number[] = [];
    for (let n = 0; n < count; n++) if (typeOf(n) === 'object' && nameOf(n) === name) ids.push(n);
    console.log(`\n${name}: ${ids.length} alive after ${countArg} requests`);
    for (const id of ids.slice(0, 3)) {
      // Breadth-first back towards a root: the shortest retaining path.
      const seen = new Map<number, { from: number; edge: string } | null>([[id, null]]);
      const queue = [id];
      let root = -1;
      while (queue.length && root < 0) {
        const n = queue.shift() as number;
        for (const r of back[n] ?? []) {
          if (seen.has(r.from)) continue;
          seen.set(r.from, { from: n, edge: r.edge });
          if (typeOf(r.from) === 'synthetic' || r.from === 0) {
            root = r.from;
            break;
          }
          queue.push(r.from);
        }
      }
      const path: string[] = [];
      for (let n = root; n >= 0 && n !== id; ) {
        const step = seen.get(n);
        if (!step) break;
        path.push(`${typeOf(n)} ${nameOf(n).slice(0, 60)} --${step.edge}-->`);
        n = step.from;
      }
      console.log(`  ${path.join('\n    ')}\n    ${name}`);
    }
  }
}
