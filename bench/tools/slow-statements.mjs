// Preloaded into the compiled embedded system (`EXTRA=--import=<this file>` in stall-trace.ts):
// prints each statement the embedded store's thread took longer than SLOW_STATEMENT_MS (5) to
// serve, with its text. The store's thread (lib/db/pglite-worker.ts) serves one message at a time
// in order, so a statement's service time is its reply's time less the later of its send and the
// previous reply; the line is printed when the reply arrives, so stall-trace.ts stamps it on the
// generator's clock and shows it beside the slow requests of that window.
import { Worker } from 'node:worker_threads';

const slowMs = Number(process.env.SLOW_STATEMENT_MS ?? 5);
const sent = new Map();
let lastReply = 0;
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function postMessage(m, ...rest) {
  if (m && typeof m === 'object' && typeof m.id === 'number' && (m.op === 'query' || m.op === 'exec'))
    sent.set(m.id, { at: performance.now(), sql: String(m.sql).replace(/\s+/g, ' ').trim().slice(0, 120) });
  return post.call(this, m, ...rest);
};
const emit = Worker.prototype.emit;
Worker.prototype.emit = function (event, m, ...rest) {
  if (event === 'message' && m && typeof m === 'object' && typeof m.id === 'number') {
    const s = sent.get(m.id);
    const now = performance.now();
    if (s) {
      sent.delete(m.id);
      const served = now - Math.max(s.at, lastReply);
      if (served > slowMs)
        process.stderr.write(`slow statement ${served.toFixed(1)} ms (waited ${(now - s.at - served).toFixed(1)}): ${s.sql}\n`);
    }
    lastReply = now;
  }
  return emit.call(this, event, m, ...rest);
};
