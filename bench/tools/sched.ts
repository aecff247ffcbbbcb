/**
 * Where a thread's time went while requests waited: on a core, waiting for one (the run queue),
 * or neither (asleep or blocked in a system call). Linux keeps both counters per thread in
 * /proc/<pid>/task/<tid>/schedstat (ns on a CPU, ns runnable but waiting); a sampler in its own
 * process reads them every few milliseconds so its reads neither share the server's loop nor the
 * load generator's. A late event loop that was on its core the whole time did work (JavaScript,
 * a collection, a synchronous call); one that waited for a core was crowded out by the other
 * threads of a 2-core machine. `perf sched` would say the same but needs a kernel tool this VM
 * does not have, and `/proc` is all it reads (hence by hand).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { machineJiffies } from './proc.ts';

/** One thread at one instant: ns on a core and ns waiting for one, since it started. */
interface ThreadCounters {
  cpu: number;
  wait: number;
}
/** One sample: Unix ms (the generator's due-time clock), then counters by `pid:tid`. */
export interface SchedSample {
  at: number;
  threads: Record<string, ThreadCounters>;
  /** Whole machine: jiffies busy and total, from /proc/stat's first line. */
  busy: number;
  total: number;
}

/** The processes under `roots` (their children, and theirs: a generator forked by the bench). */
function withDescendants(roots: readonly number[]): number[] {
  const all = new Set(roots);
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      let children: string[] = [];
      try {
        children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ');
      } catch {
        continue;
      }
      for (const c of children.filter(Boolean).map(Number))
        if (!all.has(c)) {
          all.add(c);
          queue.push(c);
        }
    }
  }
  return [...all];
}

function readSample(pids: readonly number[]): SchedSample {
  const threads: Record<string, ThreadCounters> = {};
  for (const pid of pids) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // the process ended
    }
    for (const tid of tids) {
      try {
        const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
        threads[`${pid}:${tid}`] = { cpu: Number(cpu), wait: Number(wait) };
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  const { idle, total } = machineJiffies();
  return { at: performance.timeOrigin + performance.now(), threads, busy: total - idle, total };
}

/** Starts the sampler process over `pids` and their descendants, every `everyMs`; `stop()` resolves with its samples. */
export function startSchedSampler(pids: readonly number[], everyMs = 5): { stop(): Promise<SchedSample[]> } {
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), String(everyMs), ...pids.map(String)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('close', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '[]')));
        child.stdin?.end();
      }),
  };
}

/** Each thread's ms on a core and ms waiting for one between two samples, by `pid:tid`. */
function deltas(first: SchedSample, last: SchedSample): { id: string; cpuMs: number; waitMs: number }[] {
  return Object.entries(last.threads).map(([id, c]) => {
    const before = first.threads[id] ?? { cpu: 0, wait: 0 };
    return { id, cpuMs: (c.cpu - before.cpu) / 1e6, waitMs: (c.wait - before.wait) / 1e6 };
  });
}

/** What each thread did between two instants (ms on a core, ms waiting for one), busiest first. */
export function schedBetween(
  samples: readonly SchedSample[],
  from: number,
  to: number,
  names: Record<string, string> = {},
): { threads: { name: string; cpuMs: number; waitMs: number }[]; machineBusy: number } {
  const first = samples.findLast((s) => s.at <= from) ?? samples[0];
  const last = samples.find((s) => s.at >= to) ?? samples.at(-1);
  if (!first || !last || first === last) return { threads: [], machineBusy: Number.NaN };
  const threads = deltas(first, last)
    .map(({ id, cpuMs, waitMs }) => ({ name: names[id] ?? id, cpuMs, waitMs }))
    .filter((t) => t.cpuMs + t.waitMs >= 0.5)
    .sort((a, b) => b.cpuMs + b.waitMs - (a.cpuMs + a.waitMs));
  const machineBusy = (last.busy - first.busy) / Math.max(1, last.total - first.total);
  return { threads, machineBusy };
}

/** What each process did between the first and the last sample: ms on a core and ms waiting, by pid. */
export function schedByProcess(
  samples: readonly SchedSample[],
): Map<number, { cpuMs: number; waitMs: number }> {
  const out = new Map<number, { cpuMs: number; waitMs: number }>();
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last) return out;
  for (const { id, cpuMs, waitMs } of deltas(first, last)) {
    const pid = Number(id.split(':')[0]);
    const t = out.get(pid) ?? { cpuMs: 0, waitMs: 0 };
    t.cpuMs += cpuMs;
    t.waitMs += waitMs;
    out.set(pid, t);
  }
  return out;
}

/**
 * Names for a server's threads: its main thread, and the one Node worker that used the most CPU
 * by the last sample (the embedded store's thread under a load that writes); the rest by tid.
 */
export function threadNames(samples: readonly SchedSample[], pid: number, label: string) {
  const last = samples.at(-1);
  const names: Record<string, string> = { [`${pid}:${pid}`]: `${label} main` };
  if (!last) return names;
  const others = Object.entries(last.threads)
    .filter(([id]) => id.startsWith(`${pid}:`) && id !== `${pid}:${pid}`)
    .sort((a, b) => b[1].cpu - a[1].cpu);
  if (others[0]) names[others[0][0]] = `${label} busiest other thread`;
  return names;
}

// Run as the sampler process: `node sched.ts <everyMs> <pid>…`; prints its samples as JSON
// when its stdin closes.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [every = '5', ...pidArgs] = process.argv.slice(2);
  const roots = pidArgs.map(Number);
  // Processes forked later (a generator) join at the next listing, every 100 ms.
  let pids = withDescendants(roots).filter((p) => p !== process.pid);
  const listing = setInterval(() => {
    pids = withDescendants(roots).filter((p) => p !== process.pid);
  }, 100);
  const samples: SchedSample[] = [];
  const timer = setInterval(() => samples.push(readSample(pids)), Number(every));
  process.stdin.resume();
  process.stdin.on('end', () => {
    clearInterval(timer);
    clearInterval(listing);
    samples.push(readSample(pids));
    process.stdout.write(JSON.stringify(samples));
  });
}
