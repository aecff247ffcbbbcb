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

/**
 * Each thread of a process, by thread id: its name, and its CPU ms so far, user + system and
 * system alone (/proc/<pid>/task/<tid>/stat fields 14 and 15, in clock ticks of 10 ms).
 */
export function threadTimes(pid: number): Map<number, { name: string; cpuMs: number; sysMs: number }> {
  const out = new Map<number, { name: string; cpuMs: number; sysMs: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { name, cpuMs: (Number(f[11]) + Number(f[12])) * 10, sysMs: Number(f[12]) * 10 });
    } catch {
      // the thread ended
    }
  }
  return out;
}
