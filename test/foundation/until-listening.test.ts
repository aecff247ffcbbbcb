/**
 * harness/processes.ts's untilListening: a process that does not listen within its time is
 * stopped when the start gives up, not left running beside the next start, and with it what it
 * started (harness/process-group.ts): a wrapper's server (strace's, in the power-loss test) or
 * npm's node would otherwise run on, orphaned.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCommand, untilListening } from '../../harness/processes.ts';

/** A parent that starts a child of its own, prints its pid, and never listens (or says it does). */
const PARENT = (listens: boolean) => `
  const { spawn } = require('node:child_process');
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  console.log('grandchild ' + c.pid);
  ${listens ? `console.log(JSON.stringify({ msg: 'listening on http://127.0.0.1:9' }));` : ''}
  setInterval(() => {}, 1000);`;

const grandchildOf = (text: string) => Number(/grandchild (\d+)/.exec(text)?.[1]);

/** Running (a zombie has ended: it only waits to be reaped by whoever adopted it). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Whether `pid` has ended within a few seconds; a survivor is killed here, not left running. */
async function ends(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && running(pid); i++) await new Promise((r) => setTimeout(r, 50));
  if (!running(pid)) return true;
  process.kill(pid, 'SIGKILL');
  return false;
}

describe('untilListening', () => {
  it('stops a process that did not listen in time', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    await expect(untilListening('idle', child, 300, () => undefined)).rejects.toThrow(
      /idle did not start in 300 ms/,
    );
    const [code, signal] = await exited;
    expect(code).toBeNull();
    expect(signal).toBe('SIGKILL');
  });

  it('stops what a detached wrapper started too when it did not listen in time (strace and its server)', async () => {
    const wrapper = spawn(process.execPath, ['-e', PARENT(false)], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(wrapper, 'exit');
    const failed = await untilListening('wrapped', wrapper, 1500, () => undefined).catch((e: Error) => e);
    expect(String(failed)).toMatch(/wrapped did not start in 1500 ms/);
    const grandchild = grandchildOf(String(failed));
    expect(grandchild).toBeGreaterThan(0);
    await exited;
    expect(await ends(grandchild)).toBe(true);
  });
});

describe('startCommand', () => {
  it('leaves nothing it started running when the start fails', async () => {
    const failed = await startCommand(
      'parent',
      process.execPath,
      ['-e', PARENT(false)],
      {},
      { timeoutMs: 1500 },
    ).catch((e: Error) => e);
    expect(String(failed)).toMatch(/parent did not start in 1500 ms/);
    expect(await ends(grandchildOf(String(failed)))).toBe(true);
  });

  it('stops what the process started with it', async () => {
    const sys = await startCommand('parent', process.execPath, ['-e', PARENT(true)], {});
    const grandchild = grandchildOf(sys.output());
    expect(running(grandchild)).toBe(true);
    await sys.stop();
    expect(await ends(grandchild)).toBe(true);
  });

  it('ends the groups still running when the process that started them is interrupted (Ctrl-C)', async () => {
    // The harness in a process of its own: a server started, then that process gets SIGINT.
    const script = `
      const { startCommand } = await import('./harness/processes.ts');
      const sys = await startCommand('parent', process.execPath, ['-e', ${JSON.stringify(PARENT(true))}], {});
      console.log('child ' + sys.child.pid + ' ' + sys.output());
      process.kill(process.pid, 'SIGINT');
      setInterval(() => {}, 1000);`;
    const runner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../../', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    runner.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const [, signal] = await once(runner, 'exit');
    expect(signal).toBe('SIGINT');
    const child = Number(/child (\d+)/.exec(out)?.[1]);
    expect(child).toBeGreaterThan(0);
    // Both asked before either is checked: a survivor is killed, not left behind by a failure.
    expect([await ends(child), await ends(grandchildOf(out))]).toEqual([true, true]);
  });
});
