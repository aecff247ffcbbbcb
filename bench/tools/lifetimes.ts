/**
 * What lives a few hundred ms under load, and who holds it: the objects a scavenge promotes and
 * a full collection then frees. Starts the compiled embedded system as the open-loop bench does,
 * drives one path at a constant rate, and has the server write four heap snapshots
 * (`--heapsnapshot-signal`): S0 before the load, then A, B (GAP ms after A) and C (LATER ms
 * after B) during it. Object ids persist across one process's snapshots, so an object in A
 * and B but not in S0 was allocated under load and lived at least GAP ms; if it is gone in C it died within GAP + LATER ms. Those are grouped
 * by constructor (count, bytes), with the retaining path in B of a few of each group.
 *   npm run build && [GAP=300] [LATER=2000] [TOP=12] tsx bench/tools/lifetimes.ts <rest|graphql|price> [rate=700]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { openLoad } from '../open-loop/generator.ts';
import { PATHS } from '../open-loop/run.ts';
import { type HeapSnapshot, readSnapshot } from './heap-snapshot.ts';

const [which = 'rest', rateArg = '700'] = process.argv.slice(2);
const path = PATHS.find((p) => p.key === which);
if (!path) throw new Error(`unknown path ${which}: ${PATHS.map((p) => p.key).join(', ')}`);
const gap = Number(process.env.GAP ?? 300);
const later = Number(process.env.LATER ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'ac-lifetimes-'));
const sys = await startEmbeddedSystem(undefined, [
  '--heapsnapshot-signal=SIGUSR2',
  `--diagnostic-dir=${dir}`,
]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Signals the server and waits until its snapshot file is complete (its size stops changing). */
async function snapshot(): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(sys.child.pid as number, 'SIGUSR2');
  for (;;) {
    await sleep(200);
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    await sleep(300);
    if (size > 0 && statSync(join(dir, file)).size === size) return join(dir, file);
  }
}

const rate = Number(rateArg);
const run = (seconds: number) =>
  openLoad({ url: sys.url, primary: { requests: path.requests(), rate }, seconds, maxConnections: 64 });
await run(3); // warm-up
const s0 = await snapshot();
const load = run(12);
await sleep(3000);
const a = await snapshot();
await sleep(gap);
const b = await snapshot();
await sleep(later);
const c = await snapshot();
const { primary } = await load;
await sys.stop();
console.log(
  `${which} at ${rate}/s: n=${primary.completed} p99 ${primary.p99.toFixed(1)} ms (snapshots pause the server)`,
);

const ids = (h: HeapSnapshot) => {
  const set = new Set<number>();
  for (let n = 0; n < h.count; n++) set.add(h.idOf(n));
  return set;
};
const in0 = ids(readSnapshot(s0));
const inA = ids(readSnapshot(a));
const inC = ids(readSnapshot(c));
const hb = readSnapshot(b);
const groups = new Map<string, { count: number; bytes: number; samples: number[] }>();
const kept = { count: 0, bytes: 0 };
for (let n = 0; n < hb.count; n++) {
  const id = hb.idOf(n);
  if (in0.has(id) || !inA.has(id)) continue;
  if (inC.has(id)) {
    kept.count++;
    kept.bytes += hb.sizeOf(n);
    continue;
  }
  const key = `${hb.typeOf(n)} ${hb.nameOf(n).slice(0, 50)}`;
  const g = groups.get(key) ?? { count: 0, bytes: 0, samples: [] };
  g.count++;
  g.bytes += hb.sizeOf(n);
  if (g.samples.length < 2) g.samples.push(n);
  groups.set(key, g);
}
const sorted = [...groups.entries()].sort((x, y) => y[1].bytes - x[1].bytes);
const total = sorted.reduce((t, [, g]) => t + g.bytes, 0);
console.log(
  `allocated under load, alive in A and B (${gap} ms apart), gone in C (${later} ms later): ${(total / 1024).toFixed(0)} KB; still alive in C: ${kept.count} objects, ${(kept.bytes / 1024).toFixed(0)} KB`,
);
for (const [key, g] of sorted.slice(0, Number(process.env.TOP ?? 12))) {
  console.log(`\n${key}: ${g.count} objects, ${(g.bytes / 1024).toFixed(1)} KB`);
  for (const n of g.samples) console.log(`    ${hb.retainingPath(n).slice(-8).join('\n    ')}\n    ·`);
}
if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
process.exit(0);
