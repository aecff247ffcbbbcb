/**
 * A process the harness starts, with everything it starts, ended together: a wrapper (strace,
 * `npm start`) killed alone leaves the server it started running, orphaned (found: the
 * power-loss test's start timed out and killed strace, and the traced server ran on). So service
 * processes are spawned `detached` (a process group of their own, as a shell's job is) and
 * signalled by group. A detached group no longer hears the terminal's Ctrl-C, so the groups still
 * running are killed when this process ends (exit, or SIGINT, SIGTERM, SIGHUP).
 */
import type { ChildProcess } from 'node:child_process';

/** Signals `child`'s process group when it leads one (spawned detached), else `child` alone. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // No such group: the child shares this process's group, or its group has ended.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

/** Groups of detached children still running. */
const live = new Set<ChildProcess>();
let hooked = false;

const killLive = () => {
  for (const child of live) signalGroup(child, 'SIGKILL');
  live.clear();
};

/** Kills the detached `child`'s group when this process ends, unless the child has exited by then. */
export function endWithThisProcess(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => {
    live.delete(child);
    // The leader (a wrapper: strace, npm) gone, what it started may still run in its group:
    // nothing of a service outlives it (ESRCH, no such group left, is the usual answer).
    if (child.pid !== undefined)
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
  });
  if (hooked) return;
  hooked = true;
  process.once('exit', killLive);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killLive();
      process.off(signal, onSignal);
      // Raised again when nothing else handles it: the process ends as it would have without us.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
