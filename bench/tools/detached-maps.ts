/**
 * Which lines of a path make V8 build a new hidden class (map) for every object they create.
 *   npm run build && [NODE=<binary>] [SERVER_ENV="NAME=value,…"] \
 *     tsx bench/tools/detached-maps.ts <rest|graphql|price|order|health> [rate=300] [seconds=4]
 *
 * Starts the compiled embedded system with `--log-maps`, sends the path at a constant rate, and
 * counts the map transitions V8 logged while the load ran whose parent map is *detached*: a map
 * outside any transition tree (V8 logs them with the reason "prototype"). A transition from a
 * detached map is never cached, so each object that takes it gets maps of its own: objects built
 * as `{ ...source, extra }` when V8 could not reuse the source's map, and objects whose prototype
 * was changed after they were made. Those maps live in old space and point at young descriptor
 * arrays; every young collection keeps what they point at, so one such line on a request's path
 * made every scavenge promote ~0.5 MB and the old generation fill in a second or two
 * (docs/performance.md, "Fifth pass"). Lines with counts near the request count (or a multiple)
 * are per-request; a path with none has no such line left.
 *
 * Each event is attributed to the function whose code holds its pc (the log's code-creation
 * events), with the line and column V8 gives and the property the transition added.
 */
import { createReadStream, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { HttpRequestSpec } from '../harness.ts';
import { openLoad } from '../open-loop/generator.ts';
import { PATHS, startEmbeddedSystem } from '../open-loop/run.ts';

const [which = 'rest', rateArg = '300', secondsArg = '4'] = process.argv.slice(2);
const path =
  which === 'health'
    ? { requests: (): HttpRequestSpec[] => [{ method: 'GET', path: '/healthz' }] }
    : PATHS.find((p) => p.key === which);
if (!path) throw new Error(`unknown path ${which}`);
const logFile = join(tmpdir(), `ac-maps-${process.pid}.log`);
// SERVER_ENV="NAME=value,…": the server's environment besides the bench's (e.g. ORDER_STORE=memory).
const serverEnv = Object.fromEntries(
  (process.env.SERVER_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((item) => item.split(/=(.*)/s).slice(0, 2) as [string, string]),
);
const sys = await startEmbeddedSystem(
  process.env.NODE || undefined,
  ['--log-maps', '--no-logfile-per-isolate', `--logfile=${logFile}`],
  serverEnv,
);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
// A warm-up first: the maps a path builds once (its first requests, the optimiser) are not its cost.
await openLoad({ url: sys.url, primary: { requests: path.requests(), rate }, seconds: 2 });
const started = performance.now();
const { primary } = await openLoad({ url: sys.url, primary: { requests: path.requests(), rate }, seconds });
const loadMs = performance.now() - started;
await sys.stop();

// V8's log (hundreds of MB: read line by line, map details skipped):
// `code-creation,<type>,<kind>,<µs>,<address>,<size>,<name>,…` and
// `map,Transition,<µs>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>`.
const code: { start: number; end: number; name: string }[] = [];
const transitions: { at: number; pc: number; where: string }[] = [];
for await (const line of createInterface({
  input: createReadStream(logFile),
  crlfDelay: Number.POSITIVE_INFINITY,
})) {
  if (line.startsWith('code-creation,')) {
    const f = line.split(',');
    if (!f[4]?.startsWith('0x')) continue;
    const start = Number.parseInt(f[4], 16);
    code.push({ start, end: start + Number(f[5]), name: (f[6] ?? '').trim() });
  } else if (line.startsWith('map,')) {
    // Every map event under a warm load is a hidden class made per request; the detached
    // transitions are the common case, the others (normalisations, prototype changes) are
    // listed with V8's event and reason.
    const f = line.split(',');
    const detached = f[1] === 'Transition' && f[8] === 'prototype';
    if (f[1] === 'Transition' && !detached) continue;
    const what = detached ? `adds ${f.slice(9).join(',')}` : `${f[1]} ${f[8]} ${f.slice(9).join(',')}`.trim();
    transitions.push({
      at: Number(f[2]),
      pc: Number.parseInt(f[5] ?? '0', 16),
      where: `line ${f[6]}:${f[7]} ${what}`,
    });
  }
}
rmSync(logFile, { force: true });
code.sort((a, b) => a.start - b.start);
const functionAt = (pc: number): string => {
  let lo = 0;
  let hi = code.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = code[mid] as (typeof code)[number];
    if (pc < c.start) hi = mid - 1;
    else if (pc >= c.end) lo = mid + 1;
    else return c.name.replace(/file:\/\/|\/[^ ]*\/(dist|node_modules)\//g, '').replace(/:\d+:\d+$/, '');
  }
  return '(unknown code)';
};
// The load is the log's last stretch before the stop (the stop itself logs little).
const last = transitions.reduce((m, t) => Math.max(m, t.at), 0);
const from = last - loadMs * 1000;
const counts = new Map<string, number>();
for (const t of transitions) {
  if (t.at < from) continue;
  const key = `${functionAt(t.pc)} ${t.where}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
console.log(
  `${which} at ${rate}/s for ${seconds} s: ${primary.completed} requests, p99 ${primary.p99.toFixed(2)} ms`,
);
const rows = [...counts].sort((a, b) => b[1] - a[1]);
const total = rows.reduce((s, [, n]) => s + n, 0);
console.log(
  `${total} transitions from detached maps (${(total / Math.max(primary.completed, 1)).toFixed(1)} per request), by place:`,
);
for (const [key, n] of rows.slice(0, Number(process.env.ROWS ?? 30)))
  console.log(`${String(n).padStart(8)}  ${key}`);
