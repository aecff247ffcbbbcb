/**
 * lib/durable-file.ts under a simulated power cut (test/support/power-loss): what it wrote is on
 * the disk the cut leaves, where a plain write and rename is not.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileDurably } from '../../lib/durable-file.ts';
import { buildSyncShadow, materialise, syncShadowEnv } from '../support/power-loss/power-loss.ts';

const module = fileURLToPath(new URL('../../lib/durable-file.ts', import.meta.url));
let library: string;
beforeAll(() => {
  library = buildSyncShadow();
});

/** Runs `body` (ES module code) in a Node child under sync-shadow, then builds the disk the cut leaves. */
function afterPowerCut(body: string): string {
  const root = mkdtempSync(join(tmpdir(), 'ac-durable-root-'));
  const shadow = mkdtempSync(join(tmpdir(), 'ac-durable-shadow-'));
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
    env: { ...process.env, ...syncShadowEnv(library, root, shadow), ROOT: root },
    stdio: 'pipe',
  });
  const disk = mkdtempSync(join(tmpdir(), 'ac-durable-disk-'));
  materialise(shadow, disk);
  return disk;
}

describe('a file written durably', () => {
  it('is on the disk a power cut leaves, in directories it created', () => {
    const disk = afterPowerCut(`
      import { writeFileDurably } from ${JSON.stringify(module)};
      writeFileDurably(process.env.ROOT + '/keys/deep/ring.json', '{"keys":[1]}', { exclusive: true });
      writeFileDurably(process.env.ROOT + '/mark', 'first');
      writeFileDurably(process.env.ROOT + '/mark', 'second');`);
    expect(readFileSync(join(disk, 'keys/deep/ring.json'), 'utf8')).toBe('{"keys":[1]}');
    expect(readFileSync(join(disk, 'mark'), 'utf8')).toBe('second');
  });

  it('is gone after the cut when written and renamed without syncs (the simulation can tell)', () => {
    const disk = afterPowerCut(`
      import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
      mkdirSync(process.env.ROOT + '/keys');
      writeFileSync(process.env.ROOT + '/keys/ring.json.tmp', '{"keys":[1]}');
      renameSync(process.env.ROOT + '/keys/ring.json.tmp', process.env.ROOT + '/keys/ring.json');`);
    expect(existsSync(join(disk, 'keys/ring.json'))).toBe(false);
  });

  it('refuses to replace an existing file when exclusive, leaving the first content', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ac-durable-'));
    const file = join(dir, 'ring.json');
    writeFileDurably(file, 'first', { exclusive: true });
    expect(() => writeFileDurably(file, 'second', { exclusive: true })).toThrow(/EEXIST/);
    expect(readFileSync(file, 'utf8')).toBe('first');
    writeFileDurably(file, 'third');
    expect(readFileSync(file, 'utf8')).toBe('third');
  });
});
