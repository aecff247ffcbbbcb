/**
 * Profiles the compiled embedded system under one load, the way docs/performance.md was made:
 *   npm run build && [WARM=3] tsx bench/tools/profile.ts <graphql|rest|order> [seconds=10]   (PROFILE_NODE_FLAGS adds node flags)
 * Starts `node --cpu-prof dist/gateway/main.js` on a fresh data directory, adds the bench
 * promotion, loads it with bench/loadgen.ts (WARM seconds first, outside the summary), stops it with SIGTERM (which writes the profile)
 * and prints the self-time summary of bench/tools/cpuprofile-summary.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { load } from '../loadgen.ts';
import { PATHS } from '../open-loop/run.ts';
import { cpuSeconds } from './proc.ts';
import { extraNodeFlags, quoteRequest } from './support.ts';

const [which = 'graphql', secondsArg = '10'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const profDir = mkdtempSync(join(tmpdir(), 'ac-prof-cpu-'));
const spawnedAt = performance.now();
const sys = await startEmbeddedSystem(undefined, [
  '--cpu-prof',
  `--cpu-prof-dir=${profDir}`,
  ...extraNodeFlags(),
]);
// `order`: the agent order path (the embedded store's writes), as the open-loop bench sends it.
const requests =
  which === 'order' ? (PATHS.find((p) => p.key === 'order')?.requests() ?? []) : [quoteRequest(which)];
await load({ url: sys.url, requests, connections: 10, seconds: Number(process.env.WARM ?? 3) });
const skipMs = Math.round(performance.now() - spawnedAt);
const pid = sys.child.pid as number;
const cpuBefore = cpuSeconds(pid);
const r = await load({ url: sys.url, requests, connections: 10, seconds: Number(secondsArg) });
const cpuMsPerRequest = ((cpuSeconds(pid) - cpuBefore) * 1000) / r.requests;
console.log(
  `${which}: ${cpuMsPerRequest.toFixed(3)} ms of server CPU per request; ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, non-2xx ${r.non2xx}`,
);
console.log(`process output: ${sys.output().length} bytes`);
await sys.stop();
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
spawnSync(
  process.execPath,
  ['--import', 'tsx', 'bench/tools/cpuprofile-summary.ts', join(profDir, file), '30', String(skipMs)],
  {
    stdio: 'inherit',
  },
);
console.log(`profile: ${join(profDir, file)}`);
