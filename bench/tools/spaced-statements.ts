/**
 * What one store statement costs when statements come back to back and when they come apart,
 * as they do below saturation: the embedded store (PGlite with `npm start`'s settings and the
 * prepared statements, lib/db/pglite.ts), in this thread, runs one ACP reply insert (the
 * idempotency record of a checkout step, ~2 KB) again and again, in alternated modes:
 *
 *   back to back  the next statement as soon as the last answered (a closed loop's store);
 *   sleep         the thread sleeps PAUSE_MS between statements (the store's thread at half load,
 *                 waiting for the next request's statement);
 *   spin          the thread stays on its core for PAUSE_MS, touching nothing (time away without
 *                 sleeping: whether waking up is what costs, or the time away itself);
 *
 * and, as the control, the same modes for a piece of plain JavaScript of about the statement's
 * length with a small working set (a hash over 64 KB): if it slows after a pause as the statement
 * does, the machine is what slows, not the store's code.
 *
 *   npx tsx bench/tools/spaced-statements.ts [rounds=2] [count=600] [PAUSE_MS=5]
 *
 * Reported per mode: the median and mean wall time of one statement (or control piece), and,
 * for back to back and sleep, this process's CPU per statement (nothing else runs in it then).
 */
import { openPglite } from '../../lib/db/pglite.ts';

const [roundsArg = '2', countArg = '600'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const count = Number(countArg);
const pauseMs = Number(process.env.PAUSE_MS ?? 5);

const db = await openPglite(undefined);
// The table and statement of gateway/agent/idempotency/sql.ts (one reply, as at half load).
await db.exec(
  `CREATE TABLE agent_idempotency (key text PRIMARY KEY, fp text NOT NULL, exp bigint NOT NULL, reply text)`,
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
// The control: plain JavaScript of the same order of length (~0.5-0.9 ms here, a statement
// 0.2-0.5 ms) with a small working set and no allocation (a hash over 64 KB, four times), so that
// neither the collector nor a cold cache is in it: what a pause does to the machine itself.
const block = new Uint8Array(64 * 1024).map((_, i) => i * 31);
let sink = 0;
const control = async () => {
  let h = 2166136261;
  for (let pass = 0; pass < 4; pass++)
    for (let i = 0; i < block.length; i++) h = Math.imul(h ^ (block[i] as number), 16777619);
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
// A warm-up: the statement prepared, the code of both paths compiled, the table past its first pages.
for (let i = 0; i < 300; i++) {
  await statement();
  await control();
}
console.log(`| round | work | between | median | mean | process CPU per piece |`);
console.log(`|---|---|---|---|---|---|`);
for (let round = 1; round <= rounds; round++)
  for (const [label, work] of [
    ['reply insert', statement],
    ['control (hash)', control],
  ] as const)
    for (const mode of Object.keys(between) as Mode[]) {
      const r = await measure(work, mode);
      const gap = mode === 'back to back' ? '—' : `${mode} ${pauseMs} ms`;
      console.log(`| ${round} | ${label} | ${gap} | ${us(r.median)} | ${us(r.mean)} | ${us(r.cpu)} |`);
    }
if (sink === 0.5) console.log(sink);
await db.close();
