import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import type { Db, Queryable } from './db.ts';

// Postgres returns numeric and bigint as strings by default; keep them exact as strings
// (money is parsed into decimals by its users), but parse int4/float8 normally.

/**
 * COPY's rows joined into pieces of about 64 KiB (still streamed: one piece held at a time):
 * pg-copy-streams sends each piece it is given as its own CopyData message, two socket writes,
 * so a row per piece was two writes per row. 2,000 staged feed lines (2.4 MB) were COPYed in
 * 17–20 ms instead of 37–125, this process's CPU 4–5 ms instead of 20–75 (docs/catalog.md,
 * "Import").
 */
function* joined(rows: Iterable<string>, size = 1 << 16): Generator<string> {
  let piece: string[] = [];
  let length = 0;
  for (const row of rows) {
    piece.push(row);
    length += row.length;
    if (length < size) continue;
    yield piece.join('');
    piece = [];
    length = 0;
  }
  if (piece.length > 0) yield piece.join('');
}

export async function openPostgres(url: string, max = 10): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  // Errors on idle clients (a restarted server) must not crash the process.
  pool.on('error', () => {});
  const wrap = (c: pg.Pool | pg.PoolClient): Queryable => ({
    async query<R>(sql: string, params: readonly unknown[] = []) {
      return (await c.query(sql, params as unknown[])).rows as R[];
    },
  });
  const base = wrap(pool);
  return {
    kind: 'postgres',
    query: base.query,
    async exec(sql) {
      await pool.query(sql);
    },
    async transaction(fn) {
      const client = await pool.connect();
      // A checked-out client reports a dropped connection (a restarted server) as an 'error'
      // event on itself, not on the pool: unhandled, it would crash the process. The failing
      // query rejects anyway; the client is then destroyed instead of returned to the pool.
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken = err;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn({
          ...wrap(client),
          // Streamed: pg-copy-streams sends the rows as they are read, with backpressure.
          copyFrom: (sql, rows) => pipeline(Readable.from(joined(rows)), client.query(copyFromStdin(sql))),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        if (!broken) await client.query('ROLLBACK').catch(() => {});
        broken ??=
          err instanceof Error && /terminat|ECONNRESET|not queryable/i.test(err.message) ? err : undefined;
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    close: () => pool.end(),
  };
}
