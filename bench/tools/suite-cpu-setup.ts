/**
 * A vitest setup file that `bench/tools/suite-cpu.ts` adds (through SUITE_CPU_LOG, see
 * vitest.config.ts): for each test file, the CPU its worker used from the file's first hook to its
 * last, with the child processes it started and stopped (servers, npm, a second Node), appended
 * as one JSON line to SUITE_CPU_LOG. Wall time under a loaded suite says which file waited; CPU
 * says which file the 2-core machine pays for.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { cpuSecondsWithChildren } from './proc.ts';

const out = process.env.SUITE_CPU_LOG;
if (out) {
  let start: ReturnType<typeof cpuSecondsWithChildren>;
  let startedAt: number;
  beforeAll(() => {
    start = cpuSecondsWithChildren(process.pid);
    startedAt = performance.now();
  });
  afterAll(() => {
    const end = cpuSecondsWithChildren(process.pid);
    const line = {
      file: expect.getState().testPath,
      wallS: (performance.now() - startedAt) / 1000,
      selfS: end.self - start.self,
      childrenS: end.children - start.children,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
