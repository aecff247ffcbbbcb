/**
 * The hot paths build no hidden class per request. V8 gives every object of one shape one
 * hidden class (map); an object cloned and then extended (`{ ...x, more }`), an object literal
 * with its own getter and setter, or an object whose prototype is changed got classes of its
 * own instead, and those kept every young collection promoting, so full collections came about
 * once a second and the quotes' p99 was 15–60× their median (docs/performance.md, "Fifth
 * pass"). This starts the compiled embedded system as `npm start` does, with V8's map log, sends
 * each path after a warm-up, and counts the map events V8 logged in each path's window on the
 * request thread (harness/v8-map-log.ts). It fails on the first such line on a path, ours or a
 * dependency's (patches/@apollo+server+5.5.1.patch mends two of those), and names it. Run on a
 * second Node binary too when NODE_NEXT_BINARY names one (CI: the image's Node 24).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import type { ServiceProcess } from '../../harness/processes.ts';
import {
  HOT_PATH_CATALOG_SIZE,
  orderRequests,
  priceRequests,
  QUOTE_REQUESTS,
  type RequestSpec,
} from '../../harness/requests.ts';
import {
  byPlace,
  type MapEvent,
  mainIsolateLog,
  mapLogFlags,
  readMapEvents,
} from '../../harness/v8-map-log.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
/**
 * Requests per path before its window: enough that the path's one-time work (first compiles,
 * caches filled, lazy modules) is behind it. Fewer could only leave more events in the window,
 * a failure, never hide a map made per request (that one is made in every request, warm or
 * not). With 100, the busiest place logged 12, 36, 4 and 4 events in the four windows of 300
 * requests (Node 20, load 7): the performance entries of collections, far under the 150 then
 * allowed. It was 400: each request warming up cost the map-logged process and this one 3–9 ms
 * of CPU.
 */
const WARM = 100;
/**
 * Requests per path in its window. A map made per request logs one event or more per request at
 * its place, so a window of any length shows it at 1 or more per request, against the 0.5 below;
 * what the length changes is only how far the other places' few events stay under it, and those
 * come with collections and timers, whose number grows with the window's requests and time. It
 * was 300, where the busiest place logged at most 36 (0.12 a request): those 36 in a window of
 * 200, had they come at once and not with the requests, would be 0.18, with 100 allowed. Each
 * request cost the map-logged process and this one 3–9 ms of CPU.
 */
const MEASURED = 200;
/**
 * A line that builds a map per request logs at least one event per request, at its own place.
 * Other places log a few, whatever the load: timers, the store's upkeep, and Node's performance
 * entry of each garbage collection (prom-client's nodejs_gc_duration_seconds observes them; Node
 * makes each by changing its prototype), a few events per collection at most every tens of
 * requests. So the test is on the busiest place, not on the sum.
 */
const MOST_PER_REQUEST_AT_ONE_PLACE = 0.5;

const PATHS: [string, () => RequestSpec[]][] = [
  ['REST cart quote', () => [QUOTE_REQUESTS.rest()]],
  ['GraphQL cart quote', () => [QUOTE_REQUESTS.graphql()]],
  ['price HIT', priceRequests],
  ['agent order', orderRequests],
];

/** `count` requests, four at a time, each expected to succeed. */
async function send(url: string, requests: RequestSpec[], count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const r = requests[next++ % requests.length] as RequestSpec;
      const res = await fetch(`${url}${r.path}`, {
        method: r.method ?? 'GET',
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${r.method ?? 'GET'} ${r.path}: ${res.status} ${text}`);
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}

const binaries: [string, string][] = [
  ['this Node', process.execPath],
  ...(process.env.NODE_NEXT_BINARY
    ? [['NODE_NEXT_BINARY', process.env.NODE_NEXT_BINARY] as [string, string]]
    : []),
];

beforeAll(() => {
  // What CI's `npm run build` made; rebuilt here only when sources are newer.
  const build = spawnSync(process.execPath, [join(root, 'scripts/ensure-build.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
}, 300_000);

describe.each(binaries)('hidden classes on the hot paths, %s', (_label, node) => {
  const logDir = mkdtempSync(join(tmpdir(), 'ac-maps-'));
  const windows = new Map<string, { from: number; to: number }>();
  let events: MapEvent[] = [];
  let argv: string[] = [];

  beforeAll(async () => {
    const spawnedAt = performance.now();
    const sys: ServiceProcess = await startEmbeddedSystem(
      node,
      mapLogFlags(),
      { CATALOG_SIZE: String(HOT_PATH_CATALOG_SIZE) },
      logDir,
    );
    argv = readFileSync(`/proc/${sys.child.pid}/cmdline`, 'utf8').split('\0');
    try {
      // The log's clock starts a little after the spawn, so an event at log time t happened at
      // t or later here: a window taken on this clock holds only its own path's events, given
      // a pause after it longer than that delay.
      const sinceSpawn = () => (performance.now() - spawnedAt) * 1000;
      for (const [name, requests] of PATHS) {
        await send(sys.url, requests(), WARM);
        const from = sinceSpawn();
        await send(sys.url, requests(), MEASURED);
        windows.set(name, { from, to: sinceSpawn() });
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await sys.stop();
    }
    events = await readMapEvents(await mainIsolateLog(logDir));
  }, 300_000);

  afterAll(() => rmSync(logDir, { recursive: true, force: true }));

  it.each(PATHS.map(([name]) => [name]))('%s: no map made per request', (name) => {
    const window = windows.get(name);
    expect(window).toBeDefined();
    const places = byPlace(events, window?.from ?? 0, window?.to ?? 0);
    const listing = places
      .slice(0, 10)
      .map(([where, n]) => `${n} ${where}`)
      .join('\n');
    const busiest = places[0]?.[1] ?? 0;
    expect(busiest / MEASURED, `map events in ${MEASURED} requests, by place:\n${listing}`).toBeLessThan(
      MOST_PER_REQUEST_AT_ONE_PLACE,
    );
  });

  it("runs the system with V8 as production does (not the suite's --no-opt for other processes)", () => {
    expect(argv).toContain('--log-maps');
    expect(argv).toContain('--liftoff-only');
    expect(argv).not.toContain('--no-opt');
  });

  it('sees map events where there are some (the log and its windows are read right)', () => {
    // The start (module loading, the schema, the first requests) builds thousands of maps.
    const first = Math.min(...[...windows.values()].map((w) => w.from));
    expect(byPlace(events, 0, first).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(1000);
  });
});
