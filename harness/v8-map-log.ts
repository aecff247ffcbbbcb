/**
 * V8's map log (`node --log-maps`): which code made the process build hidden classes (maps).
 * A warm request path should build none: V8 reuses a class for every object of one shape. Two
 * patterns made it build classes per object here, and each such class kept every young
 * collection promoting (docs/performance.md, "Fifth pass"):
 *
 * - a transition from a *detached* map (V8 logs them with the reason "prototype"): objects
 *   cloned and then extended, `{ ...source, extra }`, when V8 could not reuse the source's map;
 * - any other map event under load: an object literal with its own getter and setter going to
 *   dictionary mode, an object whose prototype is changed after it was made.
 *
 * Shared by bench/tools/detached-maps.ts (which lines, under a load) and the test that guards
 * the hot paths (test/runtime/hidden-classes.test.ts).
 */
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const LOG_NAME = 'v8-maps.log';

/**
 * The node flags that write the log: one file per isolate (thread), in the process's working
 * directory (V8 names them `isolate-<address>-<pid>-v8-maps.log` there), so the request
 * thread's events are read apart from the embedded store's thread (EMBEDDED_DB_THREAD=worker).
 */
export const mapLogFlags = (): string[] => [
  '--log-maps',
  // Without each map's descriptors (`map-details` lines, which readMapEvents skips): writing
  // them made a start under the log take ~24 s instead of a few.
  '--no-log-maps-details',
  // Nor each script's source (`script-source`, half the log's bytes) and source positions
  // (`code-source-info`), which --log-maps brings and readMapEvents skips too: the same map
  // and code lines in a log of ~17 MB instead of ~40, and less CPU to start and to read it.
  '--no-log-source-code',
  '--no-log-source-position',
  `--logfile=${LOG_NAME}`,
];

/** The request thread's log in `dir`: the isolate that loaded the gateway's entry point. */
export async function mainIsolateLog(dir: string): Promise<string> {
  for (const name of readdirSync(dir).filter((n) => n.startsWith('isolate-') && n.endsWith(LOG_NAME))) {
    const file = join(dir, name);
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      if (line.startsWith('code-creation,') && line.includes('/gateway/main.js')) {
        lines.close();
        return file;
      }
    }
  }
  throw new Error(`no map log of the request thread in ${dir}`);
}

export interface MapEvent {
  /** Microseconds since the process's log started (shortly after the process did). */
  at: number;
  /** The function that ran, the line and column V8 gives, and what the event did. */
  where: string;
}

/**
 * The map events of a log that a warm path should not have: transitions from detached maps and
 * every non-transition event; cached transitions (the normal case) are left out. The log is
 * tens of MB per isolate, so it is read line by line.
 */
export async function readMapEvents(file: string): Promise<MapEvent[]> {
  // `code-creation,<type>,<kind>,<µs>,<address>,<size>,<name>,…` and
  // `map,<event>,<µs>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>`.
  const code: { start: number; end: number; name: string }[] = [];
  const events: { at: number; pc: number; where: string }[] = [];
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    if (line.startsWith('code-creation,')) {
      const f = line.split(',');
      if (!f[4]?.startsWith('0x')) continue;
      const start = Number.parseInt(f[4], 16);
      code.push({ start, end: start + Number(f[5]), name: (f[6] ?? '').trim() });
    } else if (line.startsWith('map,')) {
      const f = line.split(',');
      const detached = f[1] === 'Transition' && f[8] === 'prototype';
      if (f[1] === 'Transition' && !detached) continue;
      const what = detached
        ? `adds ${f.slice(9).join(',')}`
        : `${f[1]} ${f[8]} ${f.slice(9).join(',')}`.trim();
      events.push({
        at: Number(f[2]),
        pc: Number.parseInt(f[5] ?? '0', 16),
        where: `line ${f[6]}:${f[7]} ${what}`,
      });
    }
  }
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
  return events.map((e) => ({ at: e.at, where: `${functionAt(e.pc)} ${e.where}` }));
}

/** The events from `from` to `to` (µs), counted by place, most first. */
export function byPlace(
  events: readonly MapEvent[],
  from: number,
  to = Number.POSITIVE_INFINITY,
): [string, number][] {
  const counts = new Map<string, number>();
  for (const e of events) if (e.at >= from && e.at < to) counts.set(e.where, (counts.get(e.where) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}
