/**
 * Vitest's own order, except where it has no durations yet (a fresh clone, as CI runs): it then
 * starts the largest files first, and a long, small file (one that starts processes) started
 * last held a worker after the rest had finished. Here those files go first, longest first: the
 * 20 longest of a whole run (2026-11-27, README "How long it takes"). A file missing from the
 * list keeps vitest's place for it; a stale list costs only order, never a test.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'test/telemetry/processes.test.ts',
  'test/deploy/image.test.ts',
  'test/ops/rules.test.ts',
  'test/runtime/hidden-classes.test.ts',
  'test/foundation/pglite-worker.test.ts',
  'test/foundation/warm-up-distributed.test.ts',
  'test/console/operator-pages.test.ts',
  'test/ucp/robustness.test.ts',
  'test/console/browser.test.ts',
  'test/docs/examples.test.ts',
  'test/console/checkout-pages.test.ts',
  'test/edge/faults.test.ts',
  'test/foundation/fetch-merging.test.ts',
  'test/procurement/audit.test.ts',
  'test/console/serve.test.ts',
  'test/foundation/pglite-template.test.ts',
  'test/procurement/fuzz.test.ts',
  'test/procurement/approval-replicas.test.ts',
  'test/console/safelist.test.ts',
  'test/foundation/shutdown.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const known = (f: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(root, f.moduleId)}`) !== undefined;
    if (sorted.every(known)) return sorted;
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(root, f.moduleId));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    // Within each project (vitest runs them in this order, one after another), the listed files
    // first; the rest keep vitest's order (Array.prototype.sort is stable).
    const group = (f: TestSpecification) => sorted.findIndex((g) => g.project === f.project);
    return [...sorted].sort((a, b) => group(a) - group(b) || rank(a) - rank(b));
  }
}
