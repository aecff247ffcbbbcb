/**
 * Profiles the compiled embedded system under one load, the way docs/performance.md was made:
 *   npm run build && tsx bench/tools/profile.ts <graphql|rest|price> [seconds=10] [--heap]
 * Starts `node --cpu-prof dist/gateway/main.js` on a fresh data directory, adds the bench
 * promotion, loads it with bench/loadgen.ts, stops it with SIGTERM (which writes the profile)
 * and prints the self-time summary of bench/tools/cpuprofile-summary.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../test/edge/support.ts';
import { startProcess } from '../../test/support/processes.ts';
import { gql, testConfig } from '../../test/support/system.ts';
import { load } from '../loadgen.ts';
import { QUOTE_REQUESTS } from '../scenarios/quote.ts';

const [which = 'graphql', secondsArg = '10'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dataDir = mkdtempSync(join(tmpdir(), 'ac-prof-'));
const profDir = join(dataDir, 'prof');
const env = { DATA_DIR: dataDir, CATALOG_SIZE: '10000', LOG_LEVEL: 'info' };
const spawnedAt = performance.now();
const sys = await startProcess('embedded', env, 120_000, {
  compiled: true,
  nodeArgs: [
    '--cpu-prof',
    `--cpu-prof-dir=${profDir}`,
    ...(process.env.PROFILE_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ],
});
const config = testConfig(env);
const token = await mintDevToken(config, { subject: 'bench', roles: ['promotions:admin'] });
const added = await gql(sys.url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
if (added.errors) throw new Error(JSON.stringify(added.errors));
const request = QUOTE_REQUESTS[which as keyof typeof QUOTE_REQUESTS];
if (!request) throw new Error(`unknown load ${which}: ${Object.keys(QUOTE_REQUESTS).join(', ')}`);
await load({ url: sys.url, requests: [request()], connections: 10, seconds: 3 });
const skipMs = Math.round(performance.now() - spawnedAt);
/** CPU seconds (user + system) the server process has used: /proc/<pid>/stat fields 14 and 15. */
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${sys.child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const cpuBefore = cpuSeconds();
const r = await load({ url: sys.url, requests: [request()], connections: 10, seconds: Number(secondsArg) });
const cpuMsPerRequest = ((cpuSeconds() - cpuBefore) * 1000) / r.requests;
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
