/**
 * Profiles the compiled embedded system under one ACP operation, as profile.ts does a quote:
 *   npm run build && [WARM=3] [SESSIONS=4000] [COUNT_SQL=1] tsx bench/tools/profile-acp.ts \
 *     <create|update|complete|order|order-key> [seconds=10]   (PROFILE_NODE_FLAGS adds node flags)
 * Starts `node --cpu-prof dist/gateway/main.js` on a fresh data directory, issues a checkout API
 * key through GraphQL (as bench/acp/run.ts does), and loads one operation closed loop, 10 at a
 * time (bench/acp/flows.ts runOp): creates; updates or completions of sessions created first
 * (SESSIONS of them; a completion takes each once); or `order`, the /v2 agent order, for the
 * comparison (`order-key`: each with its own Idempotency-Key, so the order id is given). WARM
 * seconds of the same operation come first, outside the figures. Prints the server's CPU per
 * request (the whole process, and by thread: the request thread, the store's
 * thread and the rest), with COUNT_SQL=1 the statements each request sent to the store's thread
 * and the time that thread took to serve them (bench/tools/count-statements.mjs), and the request thread's self-time summary
 * (cpuprofile-summary.ts) over the measured load.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { orderRequests } from '../../harness/requests.ts';
import { type Op, runOp } from '../acp/flows.ts';
import { issueBenchKey } from '../acp/key.ts';
import { load } from '../loadgen.ts';
import { cpuSeconds, threadTimes, threadTimesBetween } from './proc.ts';
import { readStatementCounts, type StatementCounts, statementsBetween } from './statement-counts.ts';
import { extraNodeFlags } from './support.ts';

const [which = 'complete', secondsArg = '10'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const seconds = Number(secondsArg);
const warm = Number(process.env.WARM ?? 3);
const countSql = process.env.COUNT_SQL === '1';
const profDir = mkdtempSync(join(tmpdir(), 'ac-prof-acp-'));
const dataDir = mkdtempSync(join(tmpdir(), 'ac-prof-acp-data-'));
const countsFile = join(profDir, 'statements.json');
const spawnedAt = performance.now();
const profile = process.env.PROFILE !== '0';
const sys = await startEmbeddedSystem(
  undefined,
  [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
    ...(countSql ? [`--import=${join(process.cwd(), 'bench/tools/count-statements.mjs')}`] : []),
    ...extraNodeFlags(),
  ],
  { DATA_DIR: dataDir, STATEMENT_COUNTS_FILE: countsFile },
  process.env.SYSTEM_DIR,
  process.env.SYSTEM_DIR,
);
const pid = sys.child.pid as number;

const key = await issueBenchKey(sys.url, dataDir, 'profile-acp');

/** Each statement text's count and the store thread's ms serving it, so far (count-statements.mjs). */
const statementCounts = async (): Promise<StatementCounts> =>
  countSql ? readStatementCounts(pid, countsFile) : new Map();

const op = (o: Op, secs: number, ids?: string[]) =>
  runOp({ url: sys.url, key, op: o, seconds: secs, concurrency: 10, ...(ids ? { ids } : {}) });

/** Runs the measured load; resolves with how many requests it made and its figures. */
let measured: () => Promise<{ requests: number; line: string }>;
if (which === 'order' || which === 'order-key') {
  // order-key: each request its own Idempotency-Key, so each is a new order with a given id
  // (the order domain's insert-first path); 3,000 per second is more than this machine places.
  const keyed = (phase: string, secs: number) =>
    Array.from({ length: Math.ceil(secs * 3000) }, (_, i) =>
      orderRequests().map((r) => ({ ...r, headers: { ...r.headers, 'idempotency-key': `${phase}-${i}` } })),
    ).flat();
  const requestsOf = (phase: string, secs: number) =>
    which === 'order' ? orderRequests() : keyed(phase, secs);
  await load({ url: sys.url, requests: requestsOf('warm', warm), connections: 10, seconds: warm });
  const requests = requestsOf('measured', seconds);
  measured = async () => {
    const r = await load({ url: sys.url, requests, connections: 10, seconds });
    return {
      requests: r.requests,
      line: `${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, non-2xx ${r.non2xx}${r.non2xx ? ` ${JSON.stringify(r.statuses)}` : ''}`,
    };
  };
} else {
  const ids: string[] = [];
  if (which === 'create') await op('create', warm);
  else {
    const wanted = Number(process.env.SESSIONS ?? 4000);
    while (ids.length < wanted) ids.push(...(await op('create', 3)).ids);
    const warmIds = ids.splice(0, Math.min(ids.length >> 2, 1000));
    await op(which as Op, warm, warmIds);
  }
  measured = async () => {
    const r = await op(which as Op, seconds, which === 'create' ? undefined : ids);
    return {
      requests: r.count,
      line: `${Math.round(r.perSecond)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, failed ${r.failed}${r.failed ? ` ${JSON.stringify(r.failures)}` : ''}`,
    };
  };
}

const skipMs = Math.round(performance.now() - spawnedAt);
const countsBefore = await statementCounts();
const cpuBefore = cpuSeconds(pid);
const threadsBefore = threadTimes(pid);
const r = await measured();
const cpuAfter = cpuSeconds(pid);
const threadsAfter = threadTimes(pid);
const countsAfter = await statementCounts();
const perRequest = (s: number) => ((s * 1000) / r.requests).toFixed(3);
console.log(`${which}: ${perRequest(cpuAfter - cpuBefore)} ms of server CPU per request; ${r.line}`);
const deltas = threadTimesBetween(threadsBefore, threadsAfter);
const main = deltas.find((t) => t.tid === pid);
console.log(
  `  by thread (ms per request): request thread ${perRequest((main?.cpuMs ?? 0) / 1000)}; ${deltas
    .filter((t) => t.tid !== pid)
    .slice(0, 4)
    .map((t) => `${t.name}#${t.tid} ${perRequest(t.cpuMs / 1000)}`)
    .join(', ')}`,
);
if (countSql) {
  const diff = statementsBetween(countsBefore, countsAfter);
  const total = diff.reduce((s, x) => s + x.n, 0);
  const totalMs = diff.reduce((s, x) => s + x.ms, 0);
  console.log(
    `  statements to the store's thread: ${(total / r.requests).toFixed(2)} per request, served in ${(totalMs / r.requests).toFixed(3)} ms (per request: count, ms)`,
  );
  for (const x of diff.slice(0, 20))
    console.log(`    ${(x.n / r.requests).toFixed(3)}  ${(x.ms / r.requests).toFixed(3)}  ${x.sql}`);
}
await sys.stop();
if (!profile) process.exit(0);
const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
// The request thread's profile is the one named by the process id and thread 0.
const file = files.find((f) => f.includes(`.${pid}.0.`)) ?? files[0];
if (!file) throw new Error('no profile written');
spawnSync(
  process.execPath,
  ['--import', 'tsx', 'bench/tools/cpuprofile-summary.ts', join(profDir, file), '30', String(skipMs)],
  { stdio: 'inherit' },
);
console.log(`profiles: ${files.map((f) => join(profDir, f)).join(' ')}`);
