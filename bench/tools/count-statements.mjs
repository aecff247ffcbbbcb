// Preloaded into the compiled embedded system by bench/tools/profile-acp.ts (`--import`): counts
// the statements the request thread sends to the embedded store's thread (lib/db/pglite-worker.ts,
// one message per statement), by their text, and the time the store's thread took to serve them.
// That thread serves one message at a time in order, so a statement's service time is its reply's
// time less the later of its send and the previous reply (the message passing included). On
// SIGUSR2 it writes `{ text: [count, ms] }` so far to STATEMENT_COUNTS_FILE; the tool takes one
// before and one after a load and subtracts. With SLOW_STATEMENT_MS it also prints each statement
// served slower than that on stderr as its reply arrives, so bench/tools/stall-trace.ts
// (`EXTRA=--import=<this file>`) stamps it on the generator's clock beside the slow requests.
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

const slowMs = Number(process.env.SLOW_STATEMENT_MS ?? Number.POSITIVE_INFINITY);

const stats = new Map();
const sent = new Map();
let lastReply = 0;
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function postMessage(m, ...rest) {
  if (m && typeof m === 'object' && (m.op === 'query' || m.op === 'exec') && typeof m.sql === 'string') {
    const sql = m.sql.replace(/\s+/g, ' ').trim().slice(0, 110);
    const s = stats.get(sql) ?? [0, 0];
    s[0]++;
    stats.set(sql, s);
    if (typeof m.id === 'number') sent.set(m.id, { at: performance.now(), s, sql });
  }
  return post.call(this, m, ...rest);
};
const emit = Worker.prototype.emit;
Worker.prototype.emit = function (event, m, ...rest) {
  if (event === 'message' && m && typeof m === 'object' && typeof m.id === 'number') {
    const now = performance.now();
    const x = sent.get(m.id);
    if (x) {
      sent.delete(m.id);
      const served = now - Math.max(x.at, lastReply);
      x.s[1] += served;
      if (served > slowMs)
        process.stderr.write(
          `slow statement ${served.toFixed(1)} ms (queued ${(now - x.at - served).toFixed(1)}): ${x.sql}\n`,
        );
    }
    lastReply = now;
  }
  return emit.call(this, event, m, ...rest);
};
process.on('SIGUSR2', () => {
  const file = process.env.STATEMENT_COUNTS_FILE;
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(stats)));
});
