// Runs before every `npm start*`: builds dist/ when it is missing or older than any source file,
// so `npm ci && npm start` works on a fresh clone and a start never runs stale JavaScript.
// A release image ships dist/ with its stamp and no sources: nothing is newer, nothing builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist/.build-stamp');
const SOURCES = ['lib', 'subgraphs', 'gateway', 'scripts', 'ci/openapi', 'schemas', 'console'];
const FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newerThan(path, time) {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs > time;
  return readdirSync(path).some((entry) => newerThan(join(path, entry), time));
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : -1;
const stale =
  built < 0 ||
  SOURCES.some((d) => newerThan(join(root, d), built)) ||
  FILES.some((f) => newerThan(join(root, f), built));
if (stale) {
  if (!existsSync(join(root, 'node_modules/typescript'))) {
    console.error(
      'dist/ is missing or stale and TypeScript is not installed: run `npm ci && npm run build`.',
    );
    process.exit(1);
  }
  console.error(
    built < 0 ? 'building dist/ (first start)…' : 'sources changed since the last build: rebuilding dist/…',
  );
  const run = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
