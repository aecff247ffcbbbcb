import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Apollo loads graphql's CommonJS build; vitest would otherwise load the ES build and
    // fail with "Cannot use GraphQLSchema from another module or realm" (DESIGN.md pitfall).
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts', 'ci/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { APOLLO_TELEMETRY_DISABLED: '1', LOG_LEVEL: 'silent' },
  },
});
