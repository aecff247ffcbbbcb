/**
 * The embedded store's group commit (lib/db/pglite-worker.ts, EMBEDDED_DB_FSYNC=on): commits
 * that come together are synced by one fence, and a commit that comes alone is still synced
 * before it is answered. strace counts the syncs of WAL files of every thread while a script
 * sends 40 inserts at once, then 20 one after another; a sync per commit (`commit`) is the
 * control. That an acknowledged write survives a power cut is test/faults/power-loss.test.ts's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./support/group-commit-syncs.ts', import.meta.url));

async function walSyncs(): Promise<{ lines: string[]; between(from: string, to: string): number }> {
  const out = join(mkdtempSync(join(tmpdir(), 'ac-group-commit-strace-')), 'strace.txt');
  const args = ['-f', '-qq', '-y', '-e', 'trace=fsync,fdatasync,write', '-e', 'signal=none', '-o', out];
  await run('strace', [...args, process.execPath, '--import', 'tsx', script], {
    timeout: 90_000,
    env: { ...process.env },
  });
  const lines = readFileSync(out, 'utf8').split('\n');
  const at = (marker: string) => {
    const i = lines.findIndex((l) => l.includes(`${marker}\\n`));
    expect(i, marker).toBeGreaterThan(-1);
    return i;
  };
  return {
    lines,
    between: (from, to) =>
      lines.slice(at(from), at(to)).filter((l) => /\b(fsync|fdatasync)\(\d+<[^>]*\/pg_wal\//.test(l)).length,
  };
}

describe('the embedded store’s group commit', () => {
  it('syncs 40 commits sent at once in a few fences, each commit alone once, and a sync per commit without it', async () => {
    const s = await walSyncs();
    const grouped = s.between('GROUPED-AT-ONCE', 'GROUPED-ONE-BY-ONE');
    const oneByOne = s.between('GROUPED-ONE-BY-ONE', 'GROUPED-END');
    const perCommit = s.between('COMMIT-AT-ONCE', 'COMMIT-ONE-BY-ONE');
    expect(grouped).toBeGreaterThanOrEqual(1);
    expect(grouped).toBeLessThanOrEqual(10);
    // Each insert awaited before the next: nothing to group with, and each is synced before its answer.
    expect(oneByOne).toBeGreaterThanOrEqual(20);
    expect(perCommit).toBeGreaterThanOrEqual(40);
    expect(s.lines.some((l) => l.includes('GROUPED-ROWS 60'))).toBe(true);
    expect(s.lines.some((l) => l.includes('COMMIT-ROWS 40'))).toBe(true);
  }, 120_000);
});
