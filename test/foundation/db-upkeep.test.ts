/**
 * lib/db/upkeep.ts: the embedded store (PGlite, no autovacuum) vacuums a churning table after
 * a number of changed rows; Postgres, whose autovacuum does that, is never asked to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, TEST_PGLITE } from '../../harness/services.ts';
import type { Db } from '../../lib/db/index.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { openPostgres } from '../../lib/db/postgres.ts';
import { vacuumAfterChanges } from '../../lib/db/upkeep.ts';
import { vacuumCount } from '../support/vacuums.ts';

let lite: Db;
let pg: Awaited<ReturnType<typeof freshPostgres>>;
let db: Db;
beforeAll(async () => {
  lite = await openPglite(undefined, TEST_PGLITE);
  pg = await freshPostgres('upkeep');
  db = await openPostgres(pg.url);
  for (const d of [lite, db]) await d.exec('CREATE TABLE churn (id int PRIMARY KEY, n int NOT NULL)');
}, 60_000);
afterAll(async () => {
  await lite?.close();
  await db?.close();
  await pg?.drop();
});

/** The VACUUM statements a store sends, on the way to the real database. */
const watched = (real: Db) => {
  const sent: string[] = [];
  return {
    sent,
    db: {
      kind: real.kind,
      exec: async (sql: string) => {
        sent.push(sql);
        await real.exec(sql);
      },
    },
  };
};

describe('vacuumAfterChanges', () => {
  it('vacuums the table on PGlite once the changed rows reach the threshold, then counts again', async () => {
    const w = watched(lite);
    const changed = vacuumAfterChanges(w.db, 'churn', 10);
    await lite.exec('INSERT INTO churn SELECT g, 0 FROM generate_series(1, 10) g');
    const vacuums = () => vacuumCount(lite, 'churn');
    const before = await vacuums();
    for (const step of [4, 5]) await changed(step);
    expect(w.sent).toEqual([]);
    await changed(1);
    expect(w.sent).toEqual(['VACUUM churn']);
    expect(await vacuums()).toBe(before + 1);
    await changed(9);
    expect(w.sent).toHaveLength(1);
    await changed(Number.POSITIVE_INFINITY);
    expect(w.sent).toHaveLength(2);
  });

  it('tries again after the next change when a vacuum fails', async () => {
    let fail = true;
    const sent: string[] = [];
    const changed = vacuumAfterChanges(
      {
        kind: 'pglite',
        exec: async (sql) => {
          sent.push(sql);
          if (fail) throw new Error('store closing');
          await lite.exec(sql);
        },
      },
      'churn',
      3,
    );
    await changed(3);
    fail = false;
    await changed(0);
    expect(sent).toEqual(['VACUUM churn', 'VACUUM churn']);
    await changed(2);
    expect(sent).toHaveLength(2);
  });

  it('never asks Postgres, whose autovacuum does it', async () => {
    const w = watched(db);
    const changed = vacuumAfterChanges(w.db, 'churn', 1);
    for (let i = 0; i < 5; i++) await changed(1000);
    expect(w.sent).toEqual([]);
  });
});
