/**
 * What V8 still compiles and throws away in the first seconds after ready (issue 48): fresh
 * embedded starts (bench/tools/warm-start.ts's load: the REST quote at RATE/s with 100 orders/s
 * beside it, from the first ready answer), the system under `--trace-opt --trace-deopt`, its
 * stdout line-buffered (stdbuf) so each trace line's arrival is within milliseconds of V8's
 * event: glibc buffers a pipe's output in 4 KB blocks otherwise, and a quiet second's lines
 * would be counted in a later one. Per start and per second after ready (and before ready, the
 * warm-up): functions optimised (TurboFan code installed), optimised code thrown away
 * (deoptimisations) and how many of those for "wrong map"; then the functions deoptimised in
 * seconds 0–2, summed over the starts of each build. Counts, not latencies: a loaded machine
 * moves them less than it moves a p99, but it does move them (V8's counters run on the work
 * done, and a starved second does less), so alternate builds in one sitting.
 *   npm run build && [STARTS=6] [RATE=800] [SECONDS=4] [TREES=/abs/tree-a,/abs/tree-b] [SYSTEM_NODE=<node>] npx tsx bench/tools/opt-trace.ts [ENV=value ...]
 * TREES: checkouts whose dist/ is started in turn (default: this one); each needs `npm run build`.
 * SYSTEM_NODE: another Node binary for the system (e.g. Node 24, whose Maglev compiles are counted apart); not
 * NODE, which npx sets to the node it runs.
 */
import { lineBufferedNode } from './support.ts';
import { type WarmStart, warmStart } from './warm-start.ts';

const starts = Number(process.env.STARTS ?? 6);
const rate = Number(process.env.RATE ?? 800);
const seconds = Number(process.env.SECONDS ?? 4);
const trees = (process.env.TREES ?? '').split(',').filter(Boolean);
const env = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.includes('='))
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);

/** One V8 trace event: what happened, to which function, why (deoptimisations). */
export interface TraceEvent {
  /** `maglev`: Node 22+'s mid tier (`[completed compiling … (target MAGLEV)`), counted apart. */
  kind: 'optimised' | 'maglev' | 'deoptimised';
  fn: string;
  /** V8's SharedFunctionInfo address: one function's code, whichever closure ran it. */
  sfi?: string;
  reason?: string;
}

/**
 * V8's `--trace-opt --trace-deopt` lines (Node 20's V8 11.3; Node 22's print the same two):
 * `[completed optimizing 0x… <JSFunction name (sfi = 0x…)> (target TURBOFAN)]` and
 * `[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x… <JSFunction name (sfi …`.
 * Other lines (marking, compiling, the server's log) are not events here.
 */
export function traceEvent(line: string): TraceEvent | undefined {
  const fn = /<JSFunction ([^ >]*) ?\(sfi/.exec(line)?.[1] || '(anonymous)';
  const sfi = /\(sfi = (0x[0-9a-f]+)\)/.exec(line)?.[1];
  const at = sfi ? { sfi } : {};
  if (line.startsWith('[completed optimizing ')) return { kind: 'optimised', fn, ...at };
  if (line.startsWith('[completed compiling ') && line.includes('(target MAGLEV)'))
    return { kind: 'maglev', fn, ...at };
  const bail = /^\[bailout \(kind: ([^,]+), reason: ([^)]*)\): begin/.exec(line);
  if (bail) return { kind: 'deoptimised', fn, ...at, reason: `${bail[1]}: ${bail[2]}` };
  return undefined;
}

/**
 * Counts per window: "before" (from listening to ready: the warm-up), then one per pair of
 * `edges` (ms after ready); what comes after the last edge is not counted. `firstTime`: the
 * optimisations of a function (by its SharedFunctionInfo) not optimised before in the process's
 * output, so not a re-optimisation after a deoptimisation (a function V8 has moved in memory
 * since counts as new: an upper bound).
 */
export function countIn(
  lines: NonNullable<WarmStart['serverLines']>,
  edges: readonly number[],
): { optimised: number; firstTime: number; maglev: number; deoptimised: number; wrongMap: number }[] {
  const rows = Array.from({ length: edges.length }, () => ({
    optimised: 0,
    firstTime: 0,
    maglev: 0,
    deoptimised: 0,
    wrongMap: 0,
  }));
  const seen = new Set<string>();
  for (const l of lines) {
    const e = traceEvent(l.text);
    if (!e) continue;
    const known = e.kind === 'optimised' && seen.has(e.sfi ?? e.fn);
    if (e.kind === 'optimised') seen.add(e.sfi ?? e.fn);
    let i = 0;
    while (i < edges.length && l.at >= (edges[i] as number)) i++;
    const row = rows[i];
    if (!row) continue;
    if (e.kind === 'maglev') row.maglev++;
    else if (e.kind === 'optimised') {
      row.optimised++;
      if (!known) row.firstTime++;
    } else {
      row.deoptimised++;
      if (e.reason?.endsWith('wrong map')) row.wrongMap++;
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const node = lineBufferedNode(process.env.SYSTEM_NODE || undefined);
  const deopts = new Map<string, Map<string, number>>();
  const lateOpts = new Map<string, Map<string, number>>();
  for (let i = 0; i < starts; i++) {
    const tree = trees.length > 0 ? trees[i % trees.length] : undefined;
    const label = tree ?? 'this tree';
    const r = await warmStart(env, {
      rate,
      seconds,
      node,
      keepLines: true,
      nodeArgs: ['--trace-opt', '--trace-deopt', ...(process.env.EXTRA?.split(' ').filter(Boolean) ?? [])],
      ...(tree ? { tree } : {}),
    });
    // By time (seconds after ready), and by work: between the answers of each `rate` requests
    // (a starved second serves fewer requests, and V8 counts the work done, not the time).
    const rows = countIn(
      r.serverLines ?? [],
      Array.from({ length: seconds + 1 }, (_, s) => s * 1000),
    );
    const answered = r.answeredAt ?? [];
    const work = countIn(r.serverLines ?? [], [
      0,
      ...Array.from({ length: 3 }, (_, k) => answered[(k + 1) * rate - 1] ?? Number.POSITIVE_INFINITY),
    ]);
    // The warm-up's own log line: how many requests it sent in its budget.
    const warmed = (r.serverLines ?? []).find((l) => l.text.includes('"msg":"warmed up"'))?.text;
    const sent = warmed ? /"requests":(\d+)/.exec(warmed)?.[1] : undefined;
    type Row = (typeof rows)[number];
    const cell = (k: keyof Row, xs: Row[] = rows) => xs.map((x) => x[k]).join('/');
    const p99 = (x?: number) => x?.toFixed(0) ?? '-';
    console.log(
      `start ${i + 1} ${label}: ready ${(r.readyMs / 1000).toFixed(1)} s, warm-up requests ${sent ?? '?'}, answered per second ${r.perSecond.map((_, s) => answered.filter((a) => a >= s * 1000 && a < (s + 1) * 1000).length).join('/')}, second 0 p99 quote ${p99(r.perSecond[0]?.primaryP99)} / orders ${p99(r.perSecond[0]?.ordersP99)} ms`,
    );
    console.log(
      `  by second (before ready/0/1/…): optimised ${cell('optimised')}, deoptimised ${cell('deoptimised')}, wrong map ${cell('wrongMap')}`,
    );
    console.log(
      `  by answers (before ready/first ${rate}/next ${rate}/next ${rate}): optimised ${cell('optimised', work)} (first time ${cell('firstTime', work)}), deoptimised ${cell('deoptimised', work)}, wrong map ${cell('wrongMap', work)}`,
    );
    // The first 2×RATE answers after ready (1,600 at the default rate) in one figure each; '-'
    // where fewer were answered in the window.
    const within = answered.length >= 2 * rate;
    const two = (k: keyof (typeof work)[number]) =>
      within ? String((work[1]?.[k] ?? 0) + (work[2]?.[k] ?? 0)) : '-';
    console.log(
      `  first ${2 * rate} answers: optimised ${two('optimised')} (first time ${two('firstTime')}), deoptimised ${two('deoptimised')} (wrong map ${two('wrongMap')})${work.some((w) => w.maglev > 0) ? `, Maglev ${cell('maglev', work)} (before ready/…)` : ''}`,
    );
    const byFn = deopts.get(label) ?? new Map<string, number>();
    deopts.set(label, byFn);
    const late = lateOpts.get(label) ?? new Map<string, number>();
    lateOpts.set(label, late);
    const before = new Set<string>();
    for (const l of r.serverLines ?? []) {
      const e = traceEvent(l.text);
      if (!e) continue;
      if (l.at < 0 && e.kind === 'optimised') before.add(e.fn);
      if (l.at < 0 || l.at >= 3000) continue;
      if (e.kind === 'maglev') continue;
      if (e.kind === 'deoptimised') {
        const k = `${e.fn} (${e.reason})`;
        byFn.set(k, (byFn.get(k) ?? 0) + 1);
      } else {
        // Optimised again after ready (thrown away or not yet hot) or for the first time.
        const k = `${e.fn}${before.has(e.fn) ? ' (again)' : ''}`;
        late.set(k, (late.get(k) ?? 0) + 1);
      }
    }
  }
  for (const [label, late] of lateOpts) {
    console.log(`optimised in seconds 0–2, all starts of ${label} ("again": also before ready):`);
    for (const [k, n] of [...late].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(`  ${n} ${k}`);
  }
  for (const [label, byFn] of deopts) {
    console.log(`deoptimised in seconds 0–2, all starts of ${label}:`);
    for (const [k, n] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${n} ${k}`);
  }
}
