/**
 * Where the suite's CPU goes: runs `vitest run` (any arguments pass through) with
 * suite-cpu-setup.ts, then prints the files that cost the most CPU (their worker's and their
 * child processes'), and the suite's total against the machine's cores × wall time. Issue 29's
 * suite goal is a wall-time goal on a 2-core machine, so the CPU sum is the budget it spends.
 *
 *   npx tsx bench/tools/suite-cpu.ts [--walls] [vitest args…]      TOP=25 for more rows
 *
 * --walls writes each file's wall time to test/support/file-walls.json, the order in which a
 * fresh clone starts the files (test/support/sequencer.ts): run it on the whole suite.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

interface FileCpu {
  file: string;
  wallS: number;
  selfS: number;
  childrenS: number;
}

const log = join(mkdtempSync(join(tmpdir(), 'ac-suite-cpu-')), 'files.jsonl');
const writeWalls = process.argv.includes('--walls');
const started = performance.now();
const run = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2).filter((a) => a !== '--walls')], {
  stdio: 'inherit',
  env: { ...process.env, SUITE_CPU_LOG: log },
});
const wall = (performance.now() - started) / 1000;
const files = readFileSync(log, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as FileCpu)
  .sort((a, b) => b.selfS + b.childrenS - (a.selfS + a.childrenS));
const total = files.reduce((s, f) => s + f.selfS + f.childrenS, 0);
const top = Number(process.env.TOP ?? 15);
console.log(`\n| # | file | CPU s (worker + children) | wall s |\n|---|---|---|---|`);
files.slice(0, top).forEach((f, i) => {
  const cpu = `${(f.selfS + f.childrenS).toFixed(1)} (${f.selfS.toFixed(1)} + ${f.childrenS.toFixed(1)})`;
  console.log(`| ${i + 1} | \`${relative(process.cwd(), f.file)}\` | ${cpu} | ${f.wallS.toFixed(1)} |`);
});
console.log(
  `\n${files.length} files, ${total.toFixed(0)} CPU s from their first hook to their last, wall ${wall.toFixed(0)} s ` +
    `(${availableParallelism()} cores × wall = ${(availableParallelism() * wall).toFixed(0)} CPU s). ` +
    `Imports and vitest's own work are outside the per-file figures. vitest exit ${run.status}.`,
);
if (writeWalls) {
  const walls = Object.fromEntries(
    files
      .map((f) => [relative(process.cwd(), f.file), Math.round(f.wallS * 10) / 10] as const)
      .sort((a, b) => b[1] - a[1]),
  );
  writeFileSync('test/support/file-walls.json', `${JSON.stringify(walls, null, 2)}\n`);
  console.log(`wrote test/support/file-walls.json (${files.length} files)`);
}
process.exit(run.status ?? 1);
