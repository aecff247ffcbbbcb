/**
 * harness/processes.ts's untilListening: a process that does not listen within its time is
 * stopped when the start gives up, not left running beside the next start.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilListening } from '../../harness/processes.ts';

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
});
