import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.ts';

const require = createRequire(import.meta.url);

/**
 * Files that need modules of their own: the tracing test starts OpenTelemetry's SDK before it
 * imports what the SDK instruments (fastify, http, pg, ioredis), which a registry that already
 * holds them would not instrument.
 */
const OWN_REGISTRY = ['test/telemetry/traces.test.ts'];

export default defineConfig({
  resolve: {
    // Apollo loads graphql's CommonJS build; vitest would otherwise load the ES build and
    // fail with "Cannot use GraphQLSchema from another module or realm" (DESIGN.md pitfall).
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest runs (cores − 1) files at once: one on this 2-core machine, where most files spend
    // part of their time waiting for the processes, servers and timers they drive. Four at once
    // (the fault files two, below): with the shared module registry the whole suite took 461 s
    // against 487 s with three, in one quiet sitting, all passing (README, "How long it takes").
    maxWorkers: 4,
    // TEST_PROCESS_NODE_FLAGS: the processes the tests start skip V8's optimising compiler
    // (harness/processes.ts, testJitFlags: ~1 s of CPU per start for code that never runs hot);
    // `TEST_PROCESS_NODE_FLAGS= npx vitest run …` starts them as production does.
    env: {
      APOLLO_TELEMETRY_DISABLED: '1',
      LOG_LEVEL: 'silent',
      TEST_PROCESS_NODE_FLAGS: process.env.TEST_PROCESS_NODE_FLAGS ?? '--no-opt',
    },
    // Names the embedded store's template, so tests load new stores instead of running initdb.
    globalSetup: ['test/support/global-setup.ts'],
    // `npx tsx bench/tools/suite-cpu.ts`: each file's CPU, with its child processes.
    setupFiles: process.env.SUITE_CPU_LOG ? ['bench/tools/suite-cpu-setup.ts'] : [],
    // The longest files first, also in a fresh clone, which has no durations cached.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        // One module registry per worker, not one per file (isolate: false): every file here
        // imported the whole system again (~2.7 s of a worker per file, 507 s of 864 in all),
        // and nothing in these files leaves module state another one reads (each system and
        // metrics registry is made per test), but for one emptied embedded store a closed system
        // leaves for the next (harness/store-pool.ts). Measured: README, "How long it takes".
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts', 'ci/**/*.test.ts'],
          exclude: ['test/faults/**', ...OWN_REGISTRY],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: OWN_REGISTRY },
      },
      {
        // The fault suite kills and restarts servers (each file its own throwaway ones) and
        // measures timeouts: its files run after the rest of the suite, so neither disturbs the
        // other's timing, two at a time (one per core): 84 s one at a time, 51–54 s two at a
        // time, all passing in three rounds (README, "How long it takes").
        extends: true,
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
