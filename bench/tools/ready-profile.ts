/**
 * What the server's main thread does from its first ready answer on (issue 48): one fresh
 * embedded start under bench/tools/warm-start.ts's load (the REST quote at RATE/s with 100
 * orders/s beside it) with `--cpu-prof` and `--trace-gc`, then, for the window from ready to
 * +WINDOW_MS: how busy the thread was per 250 ms (JavaScript, V8's "(program)" native work, the
 * collector), the functions with the most self time, every busy stretch (samples with no idle
 * between them) longer than LONG_MS with the functions it ran, and the collections. The profile's
 * clock is the machine's monotonic clock, which the bench reads at ready too (warm-start.ts).
 *   npm run build && [RATE=800] [SECONDS=4] [WINDOW_MS=2000] [LONG_MS=50] [TREE=/abs/tree] npx tsx bench/tools/ready-profile.ts [ENV=value ...]
 * Written here because the profile readers that exist (DevTools, speedscope) are interactive
 * and cannot cut a window on another process's clock.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineBufferedNode } from './support.ts';
import { warmStart } from './warm-start.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/** One sample: when (µs, monotonic), how long it stands for, and the function on top. */
interface Sample {
  at: number;
  us: number;
  fn: string;
}

const nameOf = (n: ProfileNode): string => {
  const { functionName, url, lineNumber } = n.callFrame;
  if (!url) return functionName || '(anonymous)';
  const file = url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, '');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
};

export function samplesOf(profile: Profile): Sample[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, nameOf(n)]));
  const out: Sample[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    out.push({ at, us, fn: byId.get(id) ?? '?' });
  });
  return out;
}

const ms = (us: number) => (us / 1000).toFixed(0);

/** The top `n` functions by self time in `xs`, as "name ms". */
function top(xs: readonly Sample[], n: number): string[] {
  const by = new Map<string, number>();
  for (const s of xs) by.set(s.fn, (by.get(s.fn) ?? 0) + s.us);
  return [...by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, us]) => `${ms(us)} ms ${fn}`);
}

/** Busy stretches: runs of samples with no `(idle)` among them, longer than `longUs`. */
export function longStretches(xs: readonly Sample[], longUs: number): Sample[][] {
  const out: Sample[][] = [];
  let run: Sample[] = [];
  const close = () => {
    if (run.reduce((a, s) => a + s.us, 0) > longUs) out.push(run);
    run = [];
  };
  for (const s of xs) {
    if (s.fn === '(idle)') close();
    else run.push(s);
  }
  close();
  return out;
}

/** The report for the window [from, from + windowUs) of a profile, times relative to `from`. */
export function windowReport(
  samples: readonly Sample[],
  from: number,
  windowUs: number,
  longUs: number,
): string[] {
  const xs = samples.filter((s) => s.at >= from && s.at < from + windowUs);
  const out: string[] = [];
  for (let q = 0; q < windowUs; q += 250_000) {
    const part = xs.filter((s) => s.at >= from + q && s.at < from + q + 250_000);
    const sum = (pick: (s: Sample) => boolean) => part.filter(pick).reduce((a, s) => a + s.us, 0);
    const idle = sum((s) => s.fn === '(idle)');
    const gc = sum((s) => s.fn === '(garbage collector)');
    const program = sum((s) => s.fn === '(program)');
    out.push(
      `  ${q / 1000}–${(q + 250_000) / 1000} ms: busy ${ms(250_000 - idle)} ms (JS ${ms(250_000 - idle - gc - program)}, native ${ms(program)}, GC ${ms(gc)})`,
    );
  }
  out.push('  self time, whole window:');
  for (const line of top(
    xs.filter((s) => s.fn !== '(idle)'),
    25,
  ))
    out.push(`    ${line}`);
  const long = longStretches(xs, longUs);
  out.push(`  busy stretches over ${longUs / 1000} ms: ${long.length}`);
  for (const run of long) {
    const first = run[0] as Sample;
    const total = run.reduce((a, s) => a + s.us, 0);
    out.push(`    at +${ms(first.at - from)} ms, ${ms(total)} ms: ${top(run, 6).join('; ')}`);
  }
  return out;
}

/** `--trace-gc` lines: "[pid:0x…]   12345 ms: Scavenge …, 1.2 / 0.0 ms …" → pauses in the window. */
function collections(lines: readonly { at: number; text: string }[], windowMs: number): string[] {
  return lines
    .filter((l) => l.at >= 0 && l.at < windowMs && /: (Scavenge|Mark-Compact|Mark-sweep|Minor)/.test(l.text))
    .map((l) => `  +${l.at.toFixed(0)} ms ${l.text.replace(/^\[[^\]]*\]\s*/, '').slice(0, 140)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = Object.fromEntries(
    process.argv
      .slice(2)
      .filter((a) => a.includes('='))
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
  const windowMs = Number(process.env.WINDOW_MS ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), 'ready-profile-'));
  const r = await warmStart(env, {
    rate: Number(process.env.RATE ?? 800),
    seconds: Number(process.env.SECONDS ?? 4),
    node: lineBufferedNode(),
    keepLines: true,
    nodeArgs: [`--cpu-prof`, `--cpu-prof-dir=${dir}`, '--trace-gc'],
    ...(process.env.TREE ? { tree: process.env.TREE } : {}),
  });
  // The request thread's profile (`CPU.<date>.<time>.<pid>.<thread id 0>.<n>.cpuprofile`): the
  // store's worker thread writes one of its own.
  const file = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!file) throw new Error(`no main thread's profile in ${dir}`);
  const main = samplesOf(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile);
  const ready = r.readyMonotonicUs ?? 0;
  console.log(
    `ready after ${(r.readyMs / 1000).toFixed(1)} s; second 0 quote p99 ${r.perSecond[0]?.primaryP99.toFixed(0)} ms, orders ${r.perSecond[0]?.ordersP99.toFixed(0)} ms; profiles in ${dir}`,
  );
  console.log(`request thread, ${windowMs} ms before ready:`);
  for (const line of windowReport(main, ready - windowMs * 1000, windowMs * 1000, 1e9).slice(
    0,
    windowMs / 250,
  ))
    console.log(line);
  console.log(`request thread, ready to +${windowMs} ms:`);
  for (const line of windowReport(main, ready, windowMs * 1000, Number(process.env.LONG_MS ?? 50) * 1000))
    console.log(line);
  console.log('collections, ready to +window:');
  for (const line of collections(r.serverLines ?? [], windowMs)) console.log(line);
}
