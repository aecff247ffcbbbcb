/**
 * Run under strace by test/faults/group-commit.test.ts: the embedded store on its own thread,
 * on disk, syncing, once with the group commit (EMBEDDED_DB_FSYNC=on) and once with a sync per
 * commit (`commit`). Each stretch between markers written to stderr: 40 inserts sent at once,
 * then (group commit only) 20 inserts one after another, each awaited.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_PGLITE } from '../../../harness/services.ts';
import { openPgliteWorker } from '../../../lib/db/pglite-worker.ts';
import { testStoreWorker } from '../../foundation/support/pglite-worker-source.ts';

for (const grouped of [true, false]) {
  const db = await openPgliteWorker(mkdtempSync(join(tmpdir(), 'ac-group-commit-')), {
    ...TEST_PGLITE,
    spawn: testStoreWorker,
    sync: 'on',
    grouped,
  });
  await db.query('CREATE TABLE t (id int PRIMARY KEY)');
  const mode = grouped ? 'GROUPED' : 'COMMIT';
  process.stderr.write(`${mode}-AT-ONCE\n`);
  const ids = Array.from({ length: 40 }, (_, i) => i + 1);
  await Promise.all(ids.map((id) => db.query('INSERT INTO t (id) VALUES ($1)', [id])));
  process.stderr.write(`${mode}-ONE-BY-ONE\n`);
  if (grouped) for (let id = 41; id <= 60; id++) await db.query('INSERT INTO t (id) VALUES ($1)', [id]);
  process.stderr.write(`${mode}-END\n`);
  const [n] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
  process.stderr.write(`${mode}-ROWS ${n?.n}\n`);
  await db.close();
}
