import { type PGlite, parse, protocol } from '@electric-sql/pglite';

/**
 * Statements for PGlite that are parsed once and then run in one call into its WebAssembly.
 *
 * PGlite's own `query()` sends a parameterised statement as six protocol steps, each a separate
 * call into Postgres (Parse, Describe the statement to learn the parameters' types, Bind,
 * Describe the portal, Execute, Sync), so every statement is parsed and analysed again and pays
 * six entries into the WebAssembly. Measured on this system's own statements (replayed from a
 * checkout-completion load, docs/performance.md "ACP", sixth pass): an order insert 1.37 ms,
 * a session update 0.57 ms, most of it that fixed cost. Postgres' answer is a named prepared
 * statement: parsed once per connection, then Bind/Execute only. PGlite has no statement cache
 * and node-postgres' (which has one) runs over PGlite one message per call and parses values
 * its own way, so this is written by hand, on PGlite's exported wire-protocol serialiser and
 * result parser: the first run of a text parses it under a name and asks its parameter types
 * (one call), every run binds and executes in one call. Values are serialised by those types
 * with PGlite's own serialisers and rows parsed with its parsers, exactly as `query()` does, so
 * results are the same.
 *
 * The named statements live as long as the connection (the process); the `max` most recently
 * used texts are kept, the rest closed. Only data statements (SELECT/INSERT/UPDATE/DELETE/WITH)
 * of moderate length are named: DDL and the rare large batch use the unnamed statement (two
 * calls). A named statement whose plan no longer fits the table (`cached plan must not change
 * result type`, after a migration) is parsed again: at once outside a transaction, at its next
 * run inside one.
 */
export interface PreparedRunner {
  /** Runs `sql` (outside a transaction the file system is synced after it, as query() does). */
  run<R>(sql: string, params: readonly unknown[]): Promise<R[]>;
}

interface Statement {
  readonly name: string;
  readonly types: readonly number[];
}

const NAMED = /^\s*(select|insert|update|delete|with)\b/i;
/**
 * Texts longer than this go unnamed: the group commits' large batches (many rows of VALUES) are
 * rare, and their plans are the largest; a prepared plan lives in the WebAssembly heap, which
 * does not shrink.
 */
const MAX_NAMED_TEXT = 4_096;
const ser = protocol.serialize;
/** Names are unique in the process, so two runners on one connection never reuse one. */
let counter = 0;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The Bind message of `values` to the unnamed portal, all in text format, results in text
 * (https://www.postgresql.org/docs/current/protocol-message-formats.html, "Bind"): the bytes of
 * PGlite's `serialize.bind` for string values. Written here because that serialiser measures
 * each value's UTF-8 length with a JavaScript loop over its characters, twice: 95 ms for one
 * 4 MB value against 4 ms for Buffer.byteLength (scratch, load 15), and a catalog import binds a
 * few megabytes of JSON per statement (1.5–2 s of the CPU of importing 7,204 products). `undefined`
 * when a value is not text (PGlite's serialiser sends binary values in binary format).
 */
export function bindText(statement: string, values: readonly unknown[]): Uint8Array | undefined {
  const lengths: number[] = [];
  for (const v of values) {
    if (v === null) lengths.push(-1);
    else if (typeof v === 'string') lengths.push(Buffer.byteLength(v, 'utf8'));
    else return undefined;
  }
  const name = Buffer.from(statement, 'utf8');
  // Length, portal "" and statement C strings, parameter format codes (each 0, text), parameter
  // count, each value's length and bytes, result format count.
  let size = 4 + 1 + name.length + 1 + 2 + 2 * values.length + 2 + 2;
  for (const n of lengths) size += 4 + Math.max(n, 0);
  const out = Buffer.allocUnsafe(1 + size);
  let at = out.writeUInt8(0x42, 0); // 'B'
  at = out.writeInt32BE(size, at);
  at = out.writeUInt8(0, at);
  at += name.copy(out, at);
  at = out.writeUInt8(0, at);
  at = out.writeInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) at = out.writeInt16BE(0, at);
  at = out.writeInt16BE(values.length, at);
  values.forEach((v, i) => {
    at = out.writeInt32BE(lengths[i] as number, at);
    if (typeof v === 'string') at += out.write(v, at, 'utf8');
  });
  out.writeInt16BE(0, at); // no format codes: every result column in text
  return out;
}

export function preparedStatements(pg: PGlite, { max = 128 }: { max?: number } = {}): PreparedRunner {
  /** By text, least recently used first (a Map keeps insertion order; a hit re-inserts). */
  const named = new Map<string, Statement>();
  /** Names evicted, closed at the start of the next message. */
  let toClose: string[] = [];

  const closes = () => {
    const c = toClose.map((name) => ser.close({ type: 'S', name }));
    toClose = [];
    return c;
  };

  async function prepare(sql: string, name: string, syncToFs: boolean): Promise<Statement> {
    const messages = await pg.execProtocolStream(
      concat([
        ...closes(),
        ser.parse({ name, text: sql, types: [] }),
        ser.describe({ type: 'S', name }),
        ser.sync(),
      ]),
      { syncToFs },
    );
    return { name, types: parse.parseDescribeStatementResults(messages) };
  }

  async function statementFor(sql: string, syncToFs: boolean): Promise<Statement> {
    const hit = named.get(sql);
    if (hit) {
      named.delete(sql);
      named.set(sql, hit);
      return hit;
    }
    if (sql.length > MAX_NAMED_TEXT || !NAMED.test(sql)) return prepare(sql, '', syncToFs);
    const st = await prepare(sql, `ac_${++counter}`, syncToFs);
    named.set(sql, st);
    if (named.size > max) {
      const oldest = named.entries().next().value;
      if (oldest) {
        named.delete(oldest[0]);
        toClose.push(oldest[1].name);
      }
    }
    return st;
  }

  async function execute<R>(sql: string, params: readonly unknown[], syncToFs: boolean): Promise<R[]> {
    const st = await statementFor(sql, syncToFs);
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const serialise = pg.serializers[st.types[i] as number];
      return serialise ? serialise(v) : String(v);
    });
    const messages = await pg.execProtocolStream(
      concat([
        ...closes(),
        bindText(st.name, values) ?? ser.bind({ statement: st.name, values }),
        ser.describe({ type: 'P' }),
        ser.execute({}),
        ser.sync(),
      ]),
      { syncToFs },
    );
    return (parse.parseResults(messages, pg.parsers)[0]?.rows ?? []) as R[];
  }

  return {
    async run<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
      // PGlite's own notion (the last ReadyForQuery), also for a BEGIN sent as a statement.
      const outside = () => !pg.isInTransaction();
      try {
        return await execute<R>(sql, params, outside());
      } catch (err) {
        const e = err as { code?: string; message?: string; query?: string };
        if (e.code === '0A000' && /cached plan/.test(e.message ?? '') && named.has(sql)) {
          toClose.push((named.get(sql) as Statement).name);
          named.delete(sql);
          // Outside a transaction it is parsed again now; inside one the failure has aborted
          // the transaction, so the error stands and the next run parses the text again.
          if (outside()) return execute<R>(sql, params, true);
        }
        if (err instanceof Error) e.query ??= sql;
        throw err;
      }
    },
  };
}
