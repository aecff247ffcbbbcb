/**
 * The order in which vitest starts the files: the longest first, so the suite does not end on a
 * long file running alone. Vitest does this itself from the durations it cached in
 * node_modules/.vite, but a fresh clone (every CI run) has no cache, and vitest then starts the
 * largest files first. The files that cost most are small: one distributed topology serving
 * suites written in other files (test/ucp/distributed.test.ts is 40 lines and ran ~70 s), so a
 * fresh clone started them last. `file-walls.json` holds each file's wall time measured by
 * `npx tsx bench/tools/suite-cpu.ts --walls` (refresh it when files move; a file missing from
 * it goes first, as vitest runs unknown files first). A cached duration, where there is one,
 * still wins: it is this machine's own measurement.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const WALLS: Record<string, number> = JSON.parse(
  readFileSync(new URL('./file-walls.json', import.meta.url), 'utf8'),
) as Record<string, number>;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // The base order keeps vitest's rules between files of different groups and projects.
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const group = (f: TestSpecification) => `${f.project.config.sequence.groupOrder}:${f.project.name}`;
    const expectedMs = (f: TestSpecification) => {
      const path = relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${path}`)?.duration;
      const measured = WALLS[path];
      return cached ?? (measured === undefined ? Number.POSITIVE_INFINITY : measured * 1000);
    };
    const first = new Map<string, number>();
    base.forEach((f, i) => {
      if (!first.has(group(f))) first.set(group(f), i);
    });
    return [...base].sort(
      (a, b) => (first.get(group(a)) ?? 0) - (first.get(group(b)) ?? 0) || expectedMs(b) - expectedMs(a),
    );
  }
}
