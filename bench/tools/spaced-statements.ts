/**
 * What one store statement costs when statements come back to back and when they come apart,
 * as they do below saturation. The embedded store (PGlite on disk, with `npm start`'s Postgres
 * settings and the prepared statements: lib/db/pglite.ts), in this tool's own thread, runs one
 * ACP reply insert (the idempotency record of a checkout step, ~2 KB, into the table and index
 * of gateway/agent/idempotency/sql.ts) again and again, in modes whose order turns each round:
 *
 *   back to back  the next statement as soon as the last answered (a closed loop's store);
 *   sleep         the thread sleeps PAUSE_MS between statements (the store's thread at half load,
 *                 waiting for the next request's statement);
 *   spin          the thread stays on its core for PAUSE_MS, touching nothing (time away without
 *                 sleeping).
 *
 * Two controls of plain JavaScript run in the same modes: one with a small working set (a hash
 * over 64 KB), one with a large one (strided reads over 32 MB, as a statement's code and data
 * are large). Each piece is timed from after the pause, so the wake-up itself is not in it:
 * this measures what the work costs once running, not what waking costs (flow-cpu.ts's bare
 * route measures that).
 *
 *   [PAUSE_MS=5] node --liftoff-only --import tsx bench/tools/spaced-statements.ts [rounds=3] [count=600]
 *
 * (`--liftoff-only` as `npm start` passes it; Node 20 also takes it from the store's own
 * setFlagsFromString, Node 22 and later only from the command line.) What still differs from
 * `npm start`: the store runs on this thread, not its own worker, without the start script's
 * heap flags.
 *
 * Reported per mode: the median and mean wall time of one piece, and this process's CPU per
 * piece together with its pause (every thread: V8's and libuv's too; not for spin, whose pause
 * is CPU).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite } from '../../lib/db/pglite.ts';

const [roundsArg = '3', countArg = '600'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const count = Number(countArg);
const pauseMs = Number(process.env.PAUSE_MS ?? 5);
if (!(rounds > 0 && count > 0 && pauseMs >= 0)) {
  console.error(
    'usage: [PAUSE_MS=5] node --liftoff-only --import tsx bench/tools/spaced-statements.ts [rounds] [count]',
  );
  process.exit(2);
}

// On disk as `npm start` keeps it (initdb runs in a child, or from EMBEDDED_DB_TEMPLATE's tarball).
const db = await openPglite(mkdtempSync(join(tmpdir(), 'ac-spaced-')), {
  template: process.env.EMBEDDED_DB_TEMPLATE,
});
// The table and index of gateway/agent/idempotency/sql.ts, and its insert of one reply.
await db.exec(
  `CREATE TABLE agent_idempotency (key text PRIMARY KEY, fp text NOT NULL, exp bigint NOT NULL, reply text);
   CREATE INDEX agent_idempotency_exp ON agent_idempotency (exp)`,
);
const reply = JSON.stringify({
  id: 'cs_0123456789abcdef0123456789abcdef',
  status: 'ready_for_payment',
  line_items: Array.from({ length: 6 }, (_, i) => ({
    id: `li_${i}`,
    item: { id: `SKU-APP-00000${i}` },
    quantity: 2,
    totals: [{ type: 'subtotal', amount: 4200 + i }],
  })),
  padding: 'x'.repeat(1200),
});
let n = 0;
const statement = () =>
  db.query(
    `INSERT INTO agent_idempotency (key, fp, exp, reply) VALUES ($1, $2, $3, $4)
     ON CONFLICT (key) DO UPDATE SET fp = EXCLUDED.fp, exp = EXCLUDED.exp, reply = EXCLUDED.reply`,
    [`bench-${n++}`, 'fingerprint', Date.now() + 86_400_000, reply],
  );
// The controls: plain JavaScript with no allocation (so no collector in it), of the same order
// of length as a statement here. Small: a hash over 64 KB, four times (its data stays in the
// core's own cache). Large: one byte of every cache line of 32 MB, more than a core's caches hold.
const small = new Uint8Array(64 * 1024).map((_, i) => i * 31);
const large = new Uint8Array(32 * 1024 * 1024).map((_, i) => i * 17);
let sink = 0;
const controlSmall = async () => {
  let h = 2166136261;
  for (let pass = 0; pass < 4; pass++)
    for (let i = 0; i < small.length; i++) h = Math.imul(h ^ (small[i] as number), 16777619);
  sink ^= h;
};
const controlLarge = async () => {
  let h = 2166136261;
  for (let i = 0; i < large.length; i += 64) h = Math.imul(h ^ (large[i] as number), 16777619);
  sink ^= h;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const spin = async (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

type Mode = 'back to back' | 'sleep' | 'spin';
const between: Record<Mode, () => Promise<void>> = {
  'back to back': async () => {},
  sleep: () => sleep(pauseMs),
  spin: () => spin(pauseMs),
};

async function measure(work: () => Promise<unknown>, mode: Mode) {
  const times: number[] = [];
  const c0 = cpuMs();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await work();
    times.push(performance.now() - t);
    await between[mode]();
  }
  const cpu = (cpuMs() - c0) / count;
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / count;
  return { median: times[count >> 1] as number, mean, cpu: mode === 'spin' ? Number.NaN : cpu };
}

const us = (ms: number) => (Number.isNaN(ms) ? '—' : `${Math.round(ms * 1000)} µs`);
const works = [
  ['reply insert', statement],
  ['control, 64 KB', controlSmall],
  ['control, 32 MB', controlLarge],
] as const;
// A warm-up: the statement prepared, the code of every piece compiled, the table past its first pages.
for (let i = 0; i < 300; i++) for (const [, work] of works) await work();
console.log('| round | work | between | median | mean | process CPU per piece and its pause |');
console.log('|---|---|---|---|---|---|');
const modes = Object.keys(between) as Mode[];
for (let round = 1; round <= rounds; round++)
  // The modes' order turns each round, so none always follows the warm-up or another.
  for (const [label, work] of works)
    for (const mode of modes.map((_, i) => modes[(i + round - 1) % modes.length] as Mode)) {
      const r = await measure(work, mode);
      const gap = mode === 'back to back' ? '—' : `${mode} ${pauseMs} ms`;
      console.log(`| ${round} | ${label} | ${gap} | ${us(r.median)} | ${us(r.mean)} | ${us(r.cpu)} |`);
    }
if (sink === 0.5) console.log(sink);
await db.close();
