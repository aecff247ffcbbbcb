/**
 * Where an open-loop tail comes from: starts the compiled embedded system (its start script's
 * flags, plus --trace-gc), sends one path at a constant rate from a worker-free loop in this
 * process, and prints each window where requests waited long (from their due time) beside what
 * the server printed in that window (GC lines, log lines), both on this process's clock.
 *   npm run build && tsx bench/tools/stall-trace.ts <rest|graphql|price|order|health> <rate> [seconds=10]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startEnv, startFlags } from '../../harness/processes.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { PATHS } from '../open-loop/run.ts';

const [which = 'rest', rateArg = '700', secondsArg = '10'] = process.argv.slice(2);
// `health`: GET /healthz, the server's floor (Fastify and node:http without our work).
const path =
  which === 'health'
    ? { requests: (): HttpRequestSpec[] => [{ method: 'GET', path: '/healthz' }] }
    : PATHS.find((p) => p.key === which);
if (!path) throw new Error(`unknown path ${which}`);
const env = {
  ...process.env,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-stall-')),
  CATALOG_SIZE: '10000',
  RATE_LIMIT_CAPACITY: '1000000000',
  RATE_LIMIT_REFILL_PER_SECOND: '1000000',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};
const t0 = performance.now();
const lines: { at: number; text: string }[] = [];
const child = spawn(
  process.execPath,
  [
    ...startFlags('embedded'),
    '--trace-gc',
    ...(process.env.EXTRA?.split(' ').filter(Boolean) ?? []),
    'dist/gateway/main.js',
  ],
  { env: { ...env, ...startEnv('embedded') }, stdio: ['ignore', 'pipe', 'pipe'] },
);
let url = '';
const listening = new Promise<void>((resolve) => {
  const on = (chunk: Buffer) => {
    const at = performance.now() - t0;
    for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) {
      lines.push({ at, text });
      const m = /listening on (http:\/\/[^"\s]+)/.exec(text);
      if (m && !url) {
        url = m[1] as string;
        resolve();
      }
    }
  };
  child.stdout.on('data', on);
  child.stderr.on('data', on);
});
await listening;
const token = await mintDevToken(testConfig(env), { subject: 'bench', roles: ['promotions:admin'] });
await gql(url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
const requests = path.requests();
const pool = new Pool(url, { connections: Number(process.env.CONNS ?? 64), pipelining: 1 });
const send = async (i: number) => {
  const r = requests[i % requests.length];
  if (!r) return;
  const res = await pool.request({
    method: r.method ?? 'GET',
    path: r.path,
    headers: r.headers ?? {},
    ...(r.body ? { body: r.body } : {}),
  });
  await res.body.dump();
};
// Warm-up: 3 s at the rate.
const rate = Number(rateArg);
async function run(seconds: number, record: boolean) {
  const period = 1000 / rate;
  const start = performance.now() + 10;
  const end = start + seconds * 1000;
  const samples: { due: number; ms: number }[] = [];
  const inflight = new Set<Promise<void>>();
  let n = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (let due = start + n * period; due <= now && due < end; due = start + n * period) {
        const i = n++;
        const p = send(i)
          .then(() => {
            if (record) samples.push({ due: due - t0, ms: performance.now() - due });
          })
          .catch(() => {})
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      if (now >= end) resolve();
      else setTimeout(tick, Math.max(0, start + n * period - performance.now()));
    };
    setTimeout(tick, 10);
  });
  await Promise.all(inflight);
  return samples;
}
await run(3, false);
const mark = lines.length;
const samples = await run(Number(secondsArg), true);
const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]?.toFixed(2);
console.log(
  `${which} at ${rate}/s: n=${samples.length} p50 ${q(0.5)} p99 ${q(0.99)} p99.9 ${q(0.999)} max ${sorted.at(-1)?.toFixed(1)} ms`,
);
// Windows: consecutive samples over the threshold.
const threshold = Number(process.env.THRESHOLD ?? 20);
const slow = samples.filter((s) => s.ms > threshold).sort((a, b) => a.due - b.due);
const windows: { from: number; to: number; worst: number; count: number }[] = [];
for (const s of slow) {
  const w = windows.at(-1);
  if (w && s.due - w.to < 50) {
    w.to = s.due;
    w.worst = Math.max(w.worst, s.ms);
    w.count++;
  } else windows.push({ from: s.due, to: s.due, worst: s.ms, count: 1 });
}
const run0 = lines[mark]?.at ?? 0;
console.log(`${slow.length} requests over ${threshold} ms in ${windows.length} windows`);
for (const w of windows.slice(0, Number(process.env.WINDOWS ?? 30))) {
  console.log(
    `- ${(w.from / 1000).toFixed(3)}–${(w.to / 1000).toFixed(3)} s: ${w.count} slow, worst ${w.worst.toFixed(1)} ms`,
  );
  for (const l of lines.slice(mark))
    if (l.at >= w.from - 20 && l.at <= w.to + w.worst + 20)
      console.log(`    ${(l.at / 1000).toFixed(3)} ${l.text.slice(0, 160)}`);
}
const during = lines.slice(mark);
for (const kind of ['Scavenge', 'Mark-Compact']) {
  const pauses = during.flatMap((l) => {
    const m = new RegExp(`${kind}[^,]*?,\\s*([\\d.]+)\\s*/`).exec(l.text);
    return m ? [Number(m[1])] : [];
  });
  console.log(
    `${kind}: ${pauses.length} in the run, ${pauses.reduce((a, b) => a + b, 0).toFixed(0)} ms paused, longest ${Math.max(0, ...pauses).toFixed(1)} ms`,
  );
}
const gcs = during.filter((l) => /Mark-Compact|Mark-sweep/.test(l.text));
console.log(`${gcs.length} full collections during the run (since ${(run0 / 1000).toFixed(1)} s):`);
if (process.env.WINDOWS !== '0')
  for (const g of gcs) console.log(`    ${(g.at / 1000).toFixed(3)} ${g.text.slice(0, 200)}`);
if (process.env.DUMP)
  (await import('node:fs')).writeFileSync(
    process.env.DUMP,
    during.map((l) => `${(l.at / 1000).toFixed(3)} ${l.text}`).join('\n'),
  );
await pool.destroy();
child.kill('SIGTERM');
