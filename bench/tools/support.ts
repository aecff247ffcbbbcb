/**
 * What the profiling tools share: the compiled embedded system built in this process, one of the
 * quote loads, a process's CPU time from /proc, and GC pauses from --trace-gc lines. The tools that
 * start the system as its own process use harness/embedded.ts (startEmbeddedSystem).
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningSystem } from '../../gateway/topology.ts';
import { QUOTE_REQUESTS } from '../../harness/requests.ts';
import { testConfig } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { machineJiffies } from './proc.ts';

export interface MachineShare {
  /** Share of the machine's time its cores were busy (stolen time included), 0–1. */
  busy: number;
  /** Share the hypervisor gave to others (steal), 0–1. */
  stolen: number;
}

/** Busy and stolen shares between two readings of machineJiffies. */
export function machineShare(
  a: ReturnType<typeof machineJiffies>,
  b: ReturnType<typeof machineJiffies>,
): MachineShare {
  const span = b.total - a.total;
  // One reading at both ends (a window shorter than the sampling): no share to tell.
  if (span <= 0) return { busy: Number.NaN, stolen: Number.NaN };
  return { busy: 1 - (b.idle - a.idle) / span, stolen: (b.steal - a.steal) / span };
}

/**
 * Reads machineJiffies every `everyMs` (Unix ms stamps; a window's ends are off by at most half
 * of it) until stopped, so a tool can say after a
 * load how busy the machine was, and how much of it was taken by other guests, in any window of
 * it: a slow window that is the machine's, not the system's, shows here.
 */
export function machineSampler(everyMs = 50): {
  between(from: number, to: number): MachineShare;
  stop(): void;
} {
  const samples: { at: number; j: ReturnType<typeof machineJiffies> }[] = [];
  const take = () => samples.push({ at: Date.now(), j: machineJiffies() });
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  const nearest = (t: number) =>
    samples.reduce((best, s) => (Math.abs(s.at - t) < Math.abs(best.at - t) ? s : best));
  return {
    between(from, to) {
      take();
      return machineShare(nearest(from).j, nearest(to).j);
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * SERVER_ENV="NAME=value,…": the server's environment besides the tool's (e.g.
 * EMBEDDED_DB_THREAD=main). The tool's own settings win where it sets the same name (stall-trace's
 * DATA_DIR and STATEMENT_COUNTS_FILE, the harness's CATALOG_SIZE and rate limits), since the tool
 * reads them back. An item without `=` is an error, not an unset name.
 */
export function serverEnv(): Record<string, string> {
  const items = (process.env.SERVER_ENV ?? '').split(',').filter((item) => item.trim() !== '');
  return Object.fromEntries(
    items.map((item) => {
      const at = item.indexOf('=');
      if (at <= 0) throw new Error(`SERVER_ENV: "${item}" is not NAME=value`);
      return [item.slice(0, at).trim(), item.slice(at + 1)];
    }),
  );
}

/** `node` flags from PROFILE_NODE_FLAGS (space-separated), added to a tool's own. */
export const extraNodeFlags = (): string[] =>
  process.env.PROFILE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];

/**
 * A command that runs this Node (or `binary`) with its stdout line-buffered (coreutils' stdbuf,
 * which reaches glibc's stdio through LD_PRELOAD): V8's own traces (`--trace-opt`, `--trace-deopt`,
 * `--trace-gc`) go through printf, which a pipe buffers in 4 KB blocks, so a line read from the
 * pipe could be seconds older than its arrival says. Measured: a line printed 2 s before the
 * process's last one arrived with it.
 */
export function lineBufferedNode(binary: string = process.execPath): string {
  const node = join(mkdtempSync(join(tmpdir(), 'line-buffered-node-')), 'node');
  writeFileSync(node, `#!/bin/sh\nexec stdbuf -oL ${binary} "$@"\n`);
  chmodSync(node, 0o755);
  return node;
}

/** One of the quote bench's loads by name (`graphql`, `rest`). */
export function quoteRequest(which: string): HttpRequestSpec {
  const request = QUOTE_REQUESTS[which as keyof typeof QUOTE_REQUESTS];
  if (!request) throw new Error(`unknown load ${which}: ${Object.keys(QUOTE_REQUESTS).join(', ')}`);
  return request();
}

/** `--trace-gc` lines summed by kind: count, total, median and longest pause. */
export function gcPauses(lines: readonly string[]): string[] {
  const byKind = new Map<string, number[]>();
  for (const line of lines) {
    const m =
      /(Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact)[^,]*?,\s*([\d.]+)\s*\/\s*([\d.]+)\s*ms/.exec(
        line,
      );
    if (!m) continue;
    const list = byKind.get(m[1] as string) ?? [];
    list.push(Number(m[2]));
    byKind.set(m[1] as string, list);
  }
  return [...byKind].map(([kind, pauses]) => {
    pauses.sort((a, b) => a - b);
    const total = pauses.reduce((s, x) => s + x, 0);
    return `${kind}: ${pauses.length}, total ${total.toFixed(0)} ms, median ${pauses[pauses.length >> 1]?.toFixed(1)} ms, max ${pauses.at(-1)?.toFixed(1)} ms`;
  });
}

/**
 * The compiled embedded system built in this process (dist/, as npm start runs it) on a fresh
 * data directory, the bench promotion added: for the tools that profile their own process.
 * `inject` sends one request and then lets the loop turn: `inject` settles in microtasks, and
 * without a turn the immediates a server would run pile up and hold every finished response.
 */
export async function buildQuoteSystemHere(
  prefix: string,
  env: Record<string, string> = {},
): Promise<{
  sys: RunningSystem;
  inject(spec: HttpRequestSpec): Promise<{ statusCode: number; body: string }>;
}> {
  const config = testConfig({
    DATA_DIR: mkdtempSync(join(tmpdir(), prefix)),
    CATALOG_SIZE: '10000',
    LOG_LEVEL: 'warn',
    ...env,
  });
  const { buildEmbedded } = (await import(
    join(process.cwd(), 'dist/gateway/topology.js')
  )) as typeof import('../../gateway/topology.ts');
  const sys = await buildEmbedded(config);
  await sys.app.ready();
  const token = await mintDevToken(config, { subject: 'bench', roles: ['promotions:admin'] });
  const added = await sys.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    payload: JSON.stringify({ query: UPSERT_PROMOTION, variables: { rule: TOOLS_RULE } }),
  });
  if (added.statusCode !== 200 || added.body.includes('"errors"')) throw new Error(added.body);
  const inject = async (spec: HttpRequestSpec) => {
    const res = await sys.app.inject({
      method: (spec.method ?? 'GET') as 'GET',
      url: spec.path,
      ...(spec.headers ? { headers: spec.headers } : {}),
      ...(spec.body ? { payload: spec.body } : {}),
    });
    await new Promise((r) => setImmediate(r));
    return res;
  };
  return { sys, inject };
}
