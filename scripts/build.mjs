// `npm run build`: compiles the runtime (lib, subgraphs, gateway, scripts) to dist/ with tsc,
// then copies the files it reads at run time (schemas/, package.json) beside it, so a compiled
// module finds `../schemas/...` exactly where the source module does; then builds the operator
// console (console/, Vite) into dist/console/, which the gateway serves at /console, and makes
// the embedded store's template (dist/embedded-store/).
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);
mkdirSync(join(root, 'dist'), { recursive: true });
cpSync(join(root, 'schemas'), join(root, 'dist/schemas'), { recursive: true });
cpSync(join(root, 'package.json'), join(root, 'dist/package.json'));
buildConsole();
makeStoreTemplate();
writeFileSync(join(root, 'dist/.build-stamp'), `${new Date().toISOString()}\n`);

/**
 * The embedded store's template (lib/db/pglite-template.ts): initdb's output, made once here so
 * that no start on a new DATA_DIR runs initdb (seconds per start). Kept across builds while
 * PGlite and its settings are the same. Without it a start runs initdb, so a failure here warns.
 */
function makeStoreTemplate() {
  const module = pathToFileURL(join(root, 'dist/lib/db/pglite-template.js')).href;
  const script = `const m = await import(${JSON.stringify(module)}); m.makeShippedTemplate();`;
  const out = spawnSync(process.execPath, ['--liftoff-only', '--input-type=module', '-e', script], {
    stdio: 'inherit',
  });
  if (out.status !== 0)
    console.error('the embedded store template was not made: a start on a new DATA_DIR runs initdb.');
}

/** Vite is a development dependency: an install without it keeps the console it has (or none). */
function buildConsole() {
  let vite;
  try {
    vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin/vite.js');
  } catch {
    console.error('vite is not installed: the operator console (dist/console/) is not rebuilt.');
    return;
  }
  const args = [vite, 'build', '--config', join(root, 'console/vite.config.ts'), '--logLevel', 'warn'];
  const out = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  if (out.status !== 0) process.exit(out.status ?? 1);
}
