/**
 * A rehearsed order costs the embedded store no sync (issue 48): the warm-up's orders run their
 * statements in a transaction that is rolled back, and only a commit flushes the WAL. strace
 * counts the fsync/fdatasync calls of every thread while 20 orders are placed, then rehearsed;
 * the placed ones are the control (one sync each, EMBEDDED_DB_FSYNC=on).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./support/rehearsal-syncs.ts', import.meta.url));

/** The sync calls strace saw while the script placed 20 orders, and while it rehearsed 20. */
async function syncs(): Promise<{ placed: number; rehearsed: number }> {
  const out = join(mkdtempSync(join(tmpdir(), 'ac-rehearsal-strace-')), 'strace.txt');
  const args = ['-f', '-qq', '-e', 'trace=fsync,fdatasync,write', '-e', 'signal=none', '-o', out];
  await run('strace', [...args, process.execPath, '--import', 'tsx', script], { timeout: 60_000 });
  const lines = readFileSync(out, 'utf8').split('\n');
  const at = (marker: string) => lines.findIndex((l) => l.includes(marker));
  const [placed, rehearsed, end] = [at('PLACED-START'), at('REHEARSED-START'), at('REHEARSED-END')];
  expect(placed).toBeGreaterThan(-1);
  expect(rehearsed).toBeGreaterThan(placed);
  expect(end).toBeGreaterThan(rehearsed);
  const count = (from: number, to: number) =>
    lines.slice(from, to).filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length;
  return { placed: count(placed, rehearsed), rehearsed: count(rehearsed, end) };
}

describe('a rehearsed order and the embedded store’s WAL sync', () => {
  it('costs no sync, where a placed order costs one (the control)', async () => {
    const n = await syncs();
    expect(n.placed).toBeGreaterThanOrEqual(20);
    expect(n.rehearsed).toBe(0);
  }, 120_000);
});
