/**
 * lib/db/pglite-prepared.ts: statements parsed once and run in one call answer exactly as
 * PGlite's own query() does (rows, types, errors), are named once per text, keep at most
 * `max` texts, and survive a change of the table under a named statement.
 */
import { PGlite, protocol } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import { openPglite, PGLITE_CONF, templateTarball } from '../../lib/db/pglite.ts';
import { bindText, type PreparedRunner, preparedStatements } from '../../lib/db/pglite-prepared.ts';

let pg: PGlite;
let runner: PreparedRunner;
const named = async () =>
  (
    await pg.query<{ statement: string }>(
      'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time',
    )
  ).rows.map((r) => r.statement);

beforeAll(async () => {
  const options = { postgresqlconf: PGLITE_CONF };
  pg = TEST_PGLITE.template
    ? new PGlite({ ...options, loadDataDir: templateTarball(TEST_PGLITE.template) })
    : new PGlite(options);
  await pg.waitReady;
  await pg.exec(`CREATE TABLE t (
    id bigserial PRIMARY KEY, name text UNIQUE NOT NULL, amount numeric(12, 2), big bigint, n int,
    ok boolean, at timestamptz, doc jsonb, tags text[], nums bigint[])`);
}, 60_000);
afterAll(async () => {
  await pg?.close();
});

describe('prepared statements on PGlite', () => {
  it('returns the same rows and types as PGlite query() for any values', async () => {
    runner = preparedStatements(pg);
    const text = fc.string({ maxLength: 20 }).map((s) => s.replace(/\0/g, ''));
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          amount: fc.oneof(
            fc.constant(null),
            fc.integer({ min: -99_999, max: 99_999 }).map((c) => (c / 100).toFixed(2)),
          ),
          big: fc.oneof(fc.constant(null), fc.integer(), fc.constant(Number.MAX_SAFE_INTEGER)),
          n: fc.oneof(fc.constant(null), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
          ok: fc.oneof(fc.constant(null), fc.boolean()),
          at: fc.oneof(
            fc.constant(null),
            fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
          ),
          doc: fc.oneof(
            fc.constant(null),
            fc.jsonValue().map((v) => JSON.stringify(v)),
          ),
          tags: fc.oneof(fc.constant(null), fc.array(text, { maxLength: 4 })),
          nums: fc.oneof(fc.constant(null), fc.array(fc.integer(), { maxLength: 4 })),
        }),
        async (v) => {
          const params = [v.amount, v.big, v.n, v.ok, v.at, v.doc, v.tags, v.nums];
          const insert =
            'INSERT INTO t (name, amount, big, n, ok, at, doc, tags, nums) VALUES ($9, $1, $2, $3, $4, $5, $6, $7, $8) RETURNING *';
          const mine = await runner.run<Record<string, unknown>>(insert, [...params, `p${k++}`]);
          const theirs = (await pg.query<Record<string, unknown>>(insert, [...params, `q${k++}`])).rows;
          const { id: a, name: an, ...restMine } = mine[0] as Record<string, unknown>;
          const { id: b, name: bn, ...restTheirs } = theirs[0] as Record<string, unknown>;
          expect(typeof a).toBe(typeof b);
          expect(restMine).toEqual(restTheirs);
          const select = 'SELECT amount, big, n, ok, at, doc, tags, nums FROM t WHERE name = $1';
          expect(await runner.run(select, [an])).toEqual((await pg.query(select, [an])).rows);
          expect(await runner.run(select, [bn])).toEqual((await pg.query(select, [bn])).rows);
        },
      ),
      { numRuns: 60 },
    );
    // One name per text, however often it ran.
    const texts = await named();
    expect(texts.filter((s) => s.startsWith('INSERT INTO t')).length).toBe(1);
    expect(texts.filter((s) => s.startsWith('SELECT amount')).length).toBe(1);
  });

  it('keeps the max most recently used texts and closes the rest', async () => {
    await pg.exec('DEALLOCATE ALL');
    const small = preparedStatements(pg, { max: 2 });
    for (const i of [1, 2, 3, 1, 4]) await small.run(`SELECT ${i} AS x`, []);
    await small.run('SELECT 1 AS x', []); // the next message closes what was evicted
    expect((await named()).sort()).toEqual(['SELECT 1 AS x', 'SELECT 4 AS x']);
    // DDL and other utility statements are not named.
    await small.run('CREATE TEMP TABLE scratch (x int)', []);
    expect(await named()).not.toContain('CREATE TEMP TABLE scratch (x int)');
  });

  it('answers errors as query() does, names nothing that failed to parse, and goes on', async () => {
    const r = preparedStatements(pg);
    await r.run("INSERT INTO t (name) VALUES ('dup')", []);
    const unique = await r.run("INSERT INTO t (name) VALUES ('dup')", []).catch((e: unknown) => e);
    const theirs = await pg.query("INSERT INTO t (name) VALUES ('dup')").catch((e: unknown) => e);
    expect(unique).toMatchObject({ code: '23505', constraint: 't_name_key' });
    expect((unique as Error).message).toBe((theirs as Error).message);
    const syntax = await r.run('SELEC 1', []).catch((e: unknown) => e);
    expect(syntax).toMatchObject({ code: '42601' });
    expect(await named()).not.toContain('SELEC 1');
    const type = await r.run('SELECT $1::int AS x', ['not a number']).catch((e: unknown) => e);
    expect(type).toMatchObject({ code: '22P02' });
    expect(await r.run('SELECT $1::int AS x', ['41'])).toEqual([{ x: 41 }]);
  });

  it('parses a named statement again when its table changed shape under it', async () => {
    const r = preparedStatements(pg);
    await pg.exec('CREATE TABLE shape (a int); INSERT INTO shape VALUES (1)');
    expect(await r.run('SELECT * FROM shape', [])).toEqual([{ a: 1 }]);
    await pg.exec('ALTER TABLE shape ADD COLUMN b text DEFAULT $$x$$');
    expect(await r.run('SELECT * FROM shape', [])).toEqual([{ a: 1, b: 'x' }]);
  });

  it('runs inside a transaction without syncing, and its rows are gone after a rollback', async () => {
    const r = preparedStatements(pg);
    await pg.exec('BEGIN');
    await r.run("INSERT INTO t (name) VALUES ('rolled back')", []);
    expect(await r.run("SELECT count(*)::int AS c FROM t WHERE name = 'rolled back'", [])).toEqual([
      { c: 1 },
    ]);
    await pg.exec('ROLLBACK');
    expect(await r.run("SELECT count(*)::int AS c FROM t WHERE name = 'rolled back'", [])).toEqual([
      { c: 0 },
    ]);
  });

  it('inside a transaction, a changed shape fails the statement and the next run parses it again', async () => {
    const r = preparedStatements(pg);
    await pg.exec('CREATE TABLE shape2 (a int); INSERT INTO shape2 VALUES (1)');
    expect(await r.run('SELECT * FROM shape2', [])).toEqual([{ a: 1 }]);
    await pg.exec('ALTER TABLE shape2 ADD COLUMN b int DEFAULT 2');
    await r.run('BEGIN', []);
    expect(pg.isInTransaction()).toBe(true);
    const failed = await r.run('SELECT * FROM shape2', []).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: '0A000' });
    await r.run('ROLLBACK', []);
    expect(await r.run('SELECT * FROM shape2', [])).toEqual([{ a: 1, b: 2 }]);
  });

  it("refuses a statement sent on an in-thread transaction after it ended, instead of running it in another's", async () => {
    const db = await openPglite(undefined, TEST_PGLITE);
    try {
      await db.exec('CREATE TABLE late (x int)');
      let leftover: { query(sql: string): Promise<unknown> } | undefined;
      await db.transaction(async (tx) => {
        leftover = tx;
        await tx.query('INSERT INTO late VALUES (1)');
      });
      const late = await leftover?.query('INSERT INTO late VALUES (2)').catch((e: unknown) => e);
      expect((late as Error).message).toBe('Transaction is closed');
      expect(await db.query('SELECT x FROM late')).toEqual([{ x: 1 }]);
    } finally {
      await db.close();
    }
  });
});

describe('bindText', () => {
  it("writes the bytes of PGlite's own Bind for any text values, nulls and statement name", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.array(fc.oneof(fc.constant(null), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }))),
        (name, values) => {
          const ours = Buffer.from(bindText(name, values) as Uint8Array);
          expect(ours.equals(Buffer.from(protocol.serialize.bind({ statement: name, values })))).toBe(true);
        },
      ),
    );
  });

  it('leaves a value that is not text to PGlite (binary values go in binary format)', () => {
    expect(bindText('s', ['a', new Uint8Array([1, 2])])).toBeUndefined();
    expect(bindText('s', [1])).toBeUndefined();
  });
});
