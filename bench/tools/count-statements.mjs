// Preloaded into the compiled embedded system by bench/tools/profile-acp.ts (`--import`): counts
// the statements the request thread sends to the embedded store's thread (lib/db/pglite-worker.ts,
// one message per statement), by their text. On SIGUSR2 it writes the counts so far to
// STATEMENT_COUNTS_FILE; the tool takes one before and one after a load and subtracts.
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

const counts = new Map();
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function postMessage(m, ...rest) {
  if (m && typeof m === 'object' && m.op === 'query' && typeof m.sql === 'string') {
    const sql = m.sql.replace(/\s+/g, ' ').trim().slice(0, 110);
    counts.set(sql, (counts.get(sql) ?? 0) + 1);
  }
  return post.call(this, m, ...rest);
};
process.on('SIGUSR2', () => {
  const file = process.env.STATEMENT_COUNTS_FILE;
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(counts)));
});
