/**
 * Once per `vitest run`, before any worker starts.
 *
 * Builds dist/ if a source is newer than it (what `npm start` runs first; CI has just built it)
 * and sets TEST_COMPILED, so the processes the tests start (harness/processes.ts) run the
 * compiled JavaScript, as an operator's do, instead of each compiling the sources with tsx
 * (a third less CPU per process start).
 *
 * Names the embedded store's template tarball
 * (EMBEDDED_DB_TEMPLATE, lib/db/pglite.ts), which the workers inherit. The first store a test
 * opens makes it; every later one, in any worker or spawned process, is loaded from it instead
 * of running initdb (seconds of CPU each). It is the build's own (dist/embedded-store/, made by
 * scripts/build.mjs) when the build above ran, else one under node_modules/.cache (so `npm ci`
 * starts it over); its name holds PGlite's version and the store's settings, so a change of
 * either makes a new one (lib/db/pglite-template.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { templateFileName } from '../../lib/db/pglite-template.ts';

export default function setup(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  // TEST_COMPILED=0 skips the build (one file after a source change, say): processes then
  // start from the sources through tsx, as they do when the build fails (a type error).
  if (process.env.TEST_COMPILED !== '0') {
    const build = spawnSync(process.execPath, [join(root, 'scripts/ensure-build.mjs')], {
      encoding: 'utf8',
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (build.status === 0) process.env.TEST_COMPILED = '1';
    else console.error('dist/ could not be built: the tests start their processes from the sources (tsx)');
  }
  if (process.env.EMBEDDED_DB_TEMPLATE) return;
  // The build's own (scripts/build.mjs) when dist/ was built, else one made here on first use.
  const built = join(root, 'dist/embedded-store', templateFileName());
  process.env.EMBEDDED_DB_TEMPLATE =
    process.env.TEST_COMPILED === '1' && existsSync(built)
      ? built
      : join(root, 'node_modules/.cache/agent-commerce', templateFileName());
}
