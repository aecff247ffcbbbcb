/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by package and by function.
 *   tsx bench/tools/cpuprofile-summary.ts <file.cpuprofile> [top=25] [skip-ms=0]
 * skip-ms drops the samples of the first milliseconds (start-up, warm-up).
 * Written here because the readers that exist (Chrome DevTools, speedscope) are interactive;
 * docs/performance.md quotes this text form.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, skipArg] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-summary <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const skipUs = Number(skipArg ?? 0) * 1000;
const selfUs = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= skipUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function packageOf(url: string): string {
  if (!url) return '(native/idle)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return 'node:*';
  const m = /\/(dist\/)?(lib|gateway|subgraphs)\/(.*)$/.exec(url);
  return m ? `(ours) ${m[2]}/${m[3]?.split('/')[0]}` : url;
}

const pkg = new Map<string, number>();
const fn = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id);
  if (!n) continue;
  const { functionName, url, lineNumber } = n.callFrame;
  const p = packageOf(url);
  pkg.set(p, (pkg.get(p) ?? 0) + us);
  const key = `${functionName || '(anonymous)'}  ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
};
console.log(`profile: ${(total / 1e6).toFixed(2)} s sampled`);
print('self time by package', pkg);
print('self time by function', fn);
