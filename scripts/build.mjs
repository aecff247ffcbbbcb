// `npm run build`: compiles the runtime (lib, subgraphs, gateway, scripts) to dist/ with tsc,
// then copies the files it reads at run time (schemas/, package.json) beside it, so a compiled
// module finds `../schemas/...` exactly where the source module does.
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);
mkdirSync(join(root, 'dist'), { recursive: true });
cpSync(join(root, 'schemas'), join(root, 'dist/schemas'), { recursive: true });
cpSync(join(root, 'package.json'), join(root, 'dist/package.json'));
writeFileSync(join(root, 'dist/.build-stamp'), `${new Date().toISOString()}\n`);
