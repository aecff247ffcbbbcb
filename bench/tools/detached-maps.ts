/**
 * Which lines of a path make V8 build a new hidden class (map) for every object they create.
 *   npm run build && [NODE=<binary>] [SERVER_ENV="NAME=value,…"] \
 *     tsx bench/tools/detached-maps.ts <rest|graphql|price|order|health> [rate=300] [seconds=4]
 *
 * Starts the compiled embedded system with `--log-maps`, sends the path at a constant rate, and
 * lists the map events V8 logged while the load ran that a warm path should not have
 * (harness/v8-map-log.ts): map events (objects cloned and then extended),
 * normalisations (an object literal with its own accessors), prototype changes. One such line
 * on a request's path made every scavenge promote ~0.5–1 MB and the old generation fill in a
 * second or two (docs/performance.md, "Fifth pass"). Lines with counts near the request count
 * (or a multiple) are per-request; a path with none has no such line left. Each event is
 * attributed to the function whose code holds its pc, with the line and column V8 gives.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { byPlace, mainIsolateLog, mapLogFlags, readMapEvents } from '../../harness/v8-map-log.ts';
import { openLoad } from '../open-loop/generator.ts';
import { requestsOf } from '../open-loop/run.ts';
import { serverEnv } from './support.ts';

const [which = 'rest', rateArg = '300', secondsArg = '4'] = process.argv.slice(2);
const requests = requestsOf(which);
// V8 writes the logs into the server's working directory.
const logDir = mkdtempSync(join(tmpdir(), 'ac-maps-'));
// SERVER_ENV="NAME=value,…" (support.ts): the server's environment besides the bench's (e.g. ORDER_STORE=memory).
const sys = await startEmbeddedSystem(process.env.NODE || undefined, mapLogFlags(), serverEnv(), logDir);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
// A warm-up first: the maps a path builds once (its first requests, the optimiser) are not its cost.
await openLoad({ url: sys.url, primary: { requests: requests(), rate }, seconds: 2 });
const started = performance.now();
const { primary } = await openLoad({ url: sys.url, primary: { requests: requests(), rate }, seconds });
const loadMs = performance.now() - started;
await sys.stop();

// The request thread's events only: a worker's (the embedded store's thread) are its own.
const events = await readMapEvents(await mainIsolateLog(logDir));
rmSync(logDir, { recursive: true, force: true });
// The load is the log's last stretch before the stop (the stop itself logs little).
const last = events.reduce((m, e) => Math.max(m, e.at), 0);
const rows = byPlace(events, last - loadMs * 1000);
console.log(
  `${which} at ${rate}/s for ${seconds} s: ${primary.completed} requests, p99 ${primary.p99.toFixed(2)} ms`,
);
const total = rows.reduce((s, [, n]) => s + n, 0);
console.log(
  `${total} map events (${(total / Math.max(primary.completed, 1)).toFixed(1)} per request), by place:`,
);
for (const [key, n] of rows.slice(0, Number(process.env.ROWS ?? 30)))
  console.log(`${String(n).padStart(8)}  ${key}`);
