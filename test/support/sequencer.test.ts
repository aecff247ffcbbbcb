/**
 * The file order of test/support/sequencer.ts: within a project, the longest expected first (a
 * cached duration over the committed wall time, a file known to neither first), projects and
 * groups in vitest's own order.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { LongestFirstSequencer } from './sequencer.ts';

const root = '/repo';
const project = (name: string, groupOrder = 0) => ({
  name,
  config: { isolate: true, sequence: { groupOrder } },
});
const main = project('main');
const faults = project('faults', 1);
const spec = (p: ReturnType<typeof project>, path: string) =>
  ({ project: p, moduleId: join(root, path) }) as unknown as TestSpecification;

function sequencer(cached: Record<string, number> = {}) {
  const ctx = {
    config: { root, shard: undefined },
    cache: {
      getFileTestResults: (key: string) =>
        key in cached ? { duration: cached[key], failed: false } : undefined,
      getFileStats: () => ({ size: 1 }),
    },
  };
  return new LongestFirstSequencer(ctx as unknown as Vitest);
}
const order = async (s: LongestFirstSequencer, files: TestSpecification[]) =>
  (await s.sort(files)).map((f) => `${f.project.name}:${f.moduleId.slice(root.length + 1)}`);

describe('the longest-first sequencer', () => {
  it('starts a fresh clone on the files file-walls.json names longest, unknown files before them', async () => {
    const files = [
      spec(main, 'test/foundation/dev-key.test.ts'),
      spec(main, 'test/ucp/distributed.test.ts'),
      spec(main, 'test/not-measured-yet.test.ts'),
      spec(main, 'test/deploy/image.test.ts'),
    ];
    expect(await order(sequencer(), files)).toEqual([
      'main:test/not-measured-yet.test.ts',
      'main:test/deploy/image.test.ts',
      'main:test/ucp/distributed.test.ts',
      'main:test/foundation/dev-key.test.ts',
    ]);
  });

  it('takes this machine’s cached duration over the committed wall time', async () => {
    const files = [spec(main, 'test/deploy/image.test.ts'), spec(main, 'test/foundation/dev-key.test.ts')];
    const s = sequencer({
      'main:test/deploy/image.test.ts': 1_000,
      'main:test/foundation/dev-key.test.ts': 500_000,
    });
    expect(await order(s, files)).toEqual([
      'main:test/foundation/dev-key.test.ts',
      'main:test/deploy/image.test.ts',
    ]);
  });

  it('keeps a later group after the others, however long its files', async () => {
    const files = [
      spec(faults, 'test/faults/kill-gateway.test.ts'),
      spec(main, 'test/foundation/dev-key.test.ts'),
    ];
    expect(await order(sequencer(), files)).toEqual([
      'main:test/foundation/dev-key.test.ts',
      'faults:test/faults/kill-gateway.test.ts',
    ]);
  });
});
