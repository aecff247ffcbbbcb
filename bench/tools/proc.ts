/**
 * What the tools read from Linux's /proc: the machine's CPU time and each thread's. A module of
 * its own, importing nothing else of this repository, so the sampler process of sched.ts starts
 * light. Written by hand: these are two file reads, and /proc is the only source.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The machine's idle, stolen and total jiffies so far: /proc/stat's first line, its first eight
 * fields (user, nice, system, idle, iowait, irq, softirq, steal; guest time is already inside
 * user and nice).
 */
export function machineJiffies(): { idle: number; steal: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1, 9).map(Number);
  return { idle: (f[3] ?? 0) + (f[4] ?? 0), steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0) };
}

/** CPU seconds (user + system) a process has used: /proc/<pid>/stat fields 14 and 15. */
export function cpuSeconds(pid: number): number {
  return cpuSecondsWithChildren(pid).self;
}

/**
 * CPU seconds (user + system) of a process and, apart, of the children it has waited for:
 * /proc/<pid>/stat fields 14–15 and 16–17. A child's time reaches the second figure when its
 * parent reaps it, grandchildren's when their parent was reaped in turn.
 */
export function cpuSecondsWithChildren(pid: number): { self: number; children: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = (i: number) => Number(fields[i]) / 100;
  return { self: ticks(11) + ticks(12), children: ticks(13) + ticks(14) };
}

/** One thread's name and CPU ms, user + system and system alone. */
export interface ThreadTime {
  name: string;
  /** Its niceness and scheduling policy (0 normal, 5 SCHED_IDLE): fields 19 and 41. */
  nice: number;
  policy: number;
  cpuMs: number;
  sysMs: number;
}

/**
 * Each thread of a process, by thread id: its name, and its CPU ms so far, user + system and
 * system alone (/proc/<pid>/task/<tid>/stat fields 14 and 15, in clock ticks of 10 ms).
 */
export function threadTimes(pid: number): Map<number, ThreadTime> {
  const out = new Map<number, ThreadTime>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), {
        name,
        nice: Number(f[16]),
        policy: Number(f[38]),
        cpuMs: (Number(f[11]) + Number(f[12])) * 10,
        sysMs: Number(f[12]) * 10,
      });
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** What each thread ran between two readings of threadTimes, the busiest first; idle ones left out. */
export function threadTimesBetween(
  before: Map<number, ThreadTime>,
  after: Map<number, ThreadTime>,
): ({ tid: number } & ThreadTime)[] {
  return [...after]
    .map(([tid, t]) => {
      const b = before.get(tid);
      return { ...t, tid, cpuMs: t.cpuMs - (b?.cpuMs ?? 0), sysMs: t.sysMs - (b?.sysMs ?? 0) };
    })
    .filter((t) => t.cpuMs > 0)
    .sort((a, b) => b.cpuMs - a.cpuMs);
}
