import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { Db } from './db.ts';
import { preparedStatements } from './pglite-prepared.ts';
import { type EmbeddedSync, FENCE_SQL, SyncingNodeFS, startParams, syncTree } from './pglite-sync.ts';

/**
 * Postgres settings of the embedded store. PGlite starts Postgres with its server defaults
 * (shared_buffers 128 MB and so on), sized for a database server, not for one process whose
 * whole budget is 300 MB: measured here, the defaults hold ~260 MB RSS, these ~130 MB
 * (docs/performance.md). The embedded store holds a few tables of thousands of rows, and the
 * hot paths (catalog, promotions) read from in-memory mirrors, so small buffers cost nothing.
 */
export const PGLITE_CONF = [
  'shared_buffers = 8MB',
  'temp_buffers = 1MB',
  'wal_buffers = 1MB',
  'work_mem = 2MB',
  'maintenance_work_mem = 8MB',
].join('\n');

/**
 * pg_trgm (the catalog's search corrects misspelt words by trigram similarity) is an extension
 * PGlite ships as a bundle loaded at open; PostgreSQL servers have it in their contrib package.
 */
const options: PGliteOptions = { postgresqlconf: PGLITE_CONF, extensions: { pg_trgm } };

/**
 * PGlite is Postgres compiled to one 9 MB WebAssembly module. V8 compiles it with its baseline
 * compiler (Liftoff) and then recompiles hot functions with its optimising one (TurboFan), and
 * the optimised code and the compiler's working memory add ~55 MB of RSS on Node 20 and
 * ~120 MB on Node 24, with a first-start peak of ~800 MB there. Measured here, baseline code
 * alone runs this store's inserts at the same rate and its point reads ~25% slower, where the
 * hot paths read in-memory mirrors anyway (docs/performance.md).
 *
 * Node 20 honours the flag set here, before PGlite compiles (this process has no other
 * WebAssembly). Node 22 and later take it only on the command line: set at run time it is
 * stored but no longer changes how WebAssembly is compiled (measured: the same CPU and RSS
 * as without it). So `npm start` passes `--liftoff-only` itself, and this call remains for
 * `node dist/gateway/main.js` on Node 20 and for the in-process tests.
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--liftoff-only');
}

/**
 * Runs `body` in a short-lived Node child process, as the statements of an async function that
 * sees PGlite's constructor as `PGlite`; the child exits 0 when they finish, 1 (after printing
 * the error) when they throw. Used for the one-off initdb work below: it runs a second
 * WebAssembly instance whose ~400 MB are not all returned to the OS by this process's garbage
 * collector, so doing it here would leave a first start far heavier than every later one. The
 * child exits and takes that memory with it.
 */
function runPgliteChild(body: string): void {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = `const { PGlite } = require(${JSON.stringify(entry)});
    (async () => {
      ${body}
    })().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });`;
  // --liftoff-only on its command line: the only place Node 22 and later take it (see above).
  execFileSync(process.execPath, ['--liftoff-only', '--input-type=commonjs', '-e', script], {
    stdio: 'inherit',
  });
}

/** A new data directory is created (Postgres' initdb) in a child, for the memory reason above. */
function initialiseDataDir(dir: string): void {
  runPgliteChild(`const pg = new PGlite(${JSON.stringify(dir)}, { postgresqlconf: ${JSON.stringify(PGLITE_CONF)} });
      await pg.waitReady;
      await pg.close();`);
}

/**
 * EMBEDDED_DB_TEMPLATE: every new data directory starts as the same files (initdb's output for
 * these settings), so they are made once, as a tarball (PGlite's own dumpDataDir format, which
 * its `loadDataDir` option reads), and each new store is loaded from it. initdb took 4–15 s of
 * CPU per store here (15.6 s for an in-memory store, 2.2 s loaded from the tarball, with the
 * test suite loading the machine), and the tests open hundreds of stores. Made in a child for
 * the memory reason above, written under another name and renamed, so processes that make it
 * at the same moment each find a whole file (the last rename wins; all are equal).
 */
export function templateTarball(file: string): Blob {
  makeTemplate(file);
  return new TarballBlob(templateBytes(file));
}

/** Makes the template tarball at `file` unless it exists (templateTarball above), without reading it. */
export function makeTemplate(file: string): void {
  if (!existsSync(file)) {
    const partial = `${file}.${process.pid}.${Date.now()}.partial`;
    runPgliteChild(`const { mkdirSync, renameSync, writeFileSync } = require('node:fs');
      const { dirname } = require('node:path');
      const pg = new PGlite({ postgresqlconf: ${JSON.stringify(PGLITE_CONF)} });
      await pg.waitReady;
      const bytes = await (await pg.dumpDataDir('none')).arrayBuffer();
      mkdirSync(dirname(${JSON.stringify(partial)}), { recursive: true });
      writeFileSync(${JSON.stringify(partial)}, Buffer.from(bytes));
      renameSync(${JSON.stringify(partial)}, ${JSON.stringify(file)});
      await pg.close();`);
  }
}

/**
 * The tarball's bytes, shared by the stores opened from it while any of them still holds them
 * (a WeakRef: a process that opened one store keeps no 40 MB for it). The tests open hundreds of
 * stores from one template, one after another in each worker, and reading the 40 MB again cost
 * each open ~0.13 s here (the copy out of the page cache) and more young collections. PGlite only
 * reads them: its untar copies each file out of the tarball.
 */
let shared: { file: string; bytes: WeakRef<Uint8Array> } | undefined;
function templateBytes(file: string): Uint8Array {
  const kept = shared?.file === file ? shared.bytes.deref() : undefined;
  if (kept) return kept;
  const bytes = readFileSync(file);
  shared = { file, bytes: new WeakRef(bytes) };
  return bytes;
}

/**
 * The template's bytes as the Blob PGlite's `loadDataDir` takes, handing them over whole when
 * PGlite reads them (it calls `arrayBuffer()` once). A plain `new Blob([bytes])` copies the 40 MB
 * into Node's blob store, and Node 20 reads them back in small chunks it concatenates: ~0.5 s of
 * CPU per store opened from the template, half of an open (measured with --cpu-prof: blob
 * getSource, readNext and concat), and the tests open hundreds of stores.
 */
class TarballBlob extends Blob {
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    super([]);
    this.#bytes = bytes;
    Object.defineProperty(this, 'size', { value: bytes.byteLength });
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.#bytes;
    const whole =
      b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer;
    return Promise.resolve(whole ? (b.buffer as ArrayBuffer) : new Uint8Array(b).buffer);
  }
  // The rest of Blob, through an ordinary one (PGlite does not call these).
  override stream() {
    return new Blob([this.#bytes]).stream();
  }
  override text(): Promise<string> {
    return new Blob([this.#bytes]).text();
  }
  override slice(start?: number, end?: number, type?: string): Blob {
    return new Blob([this.#bytes]).slice(start, end, type);
  }
}

/**
 * Embedded store: PGlite runs the same SQL as Postgres from a pure npm package (no native
 * build, no server). It is single-connection and blocks the event loop while a query runs, so
 * hot paths batch their writes. See README "Storage" for the measured trade-off vs SQLite.
 */
export async function openPglite(
  dataDir: string | undefined,
  {
    template,
    sync = 'on',
    grouped = false,
  }: { template?: string | undefined; sync?: EmbeddedSync; grouped?: boolean } = {},
): Promise<GroupedDb> {
  baselineWasmOnly();
  let dir: string | undefined;
  let fresh = true;
  if (dataDir) {
    dir = join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    fresh = !existsSync(join(dir, 'PG_VERSION'));
    if (fresh && !template) initialiseDataDir(dir);
  }
  // Grouped only where there is something to sync: on disk, syncing.
  const grouping = grouped && dir !== undefined && sync === 'on';
  const opened = fresh && template ? { ...options, loadDataDir: templateTarball(template) } : options;
  // On disk, Postgres syncs its writes before a commit returns (pglite-sync.ts), or, `grouped`,
  // before the store's thread answers it (pglite-answer.ts); in memory there is nothing to
  // sync, and PGlite's own start (fsync off) is kept.
  const pg = dir
    ? new PGlite({
        ...opened,
        fs: new SyncingNodeFS(dir),
        startParams: startParams(sync, PGlite.defaultStartParams, grouping),
      })
    : new PGlite(opened);
  await pg.waitReady;
  if (dir && fresh && sync === 'on') syncTree(dir);
  // One statement per call, parsed once (pglite-prepared.ts); exec() handles several. PGlite's
  // own locks are taken as its query() takes them: a statement waits for a transaction to end,
  // and a transaction's statements hold the connection one at a time.
  const prepared = preparedStatements(pg);
  return {
    kind: 'pglite',
    ...(fresh ? { madeFrom: template ? ('template' as const) : ('initdb' as const) } : {}),
    query: <R>(sql: string, params: readonly unknown[] = []) =>
      pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => prepared.run<R>(sql, params))),
    async exec(sql) {
      await pg.exec(sql);
    },
    transaction: (fn) =>
      pg.transaction(async () => {
        // As PGlite's own transaction object: a statement after the end (one a caller left
        // running) is refused, never run in whatever transaction holds the connection then.
        let open = true;
        try {
          return await fn({
            query: <R>(sql: string, params: readonly unknown[] = []) =>
              open
                ? pg._runExclusiveQuery(() => prepared.run<R>(sql, params))
                : Promise.reject(new Error('Transaction is closed')),
          });
        } finally {
          open = false;
        }
      }),
    async ping() {
      await pg.query('SELECT 1');
    },
    close: () => pg.close(),
    grouped: grouping,
    inTransaction: () => pg.isInTransaction(),
    async fence() {
      if (!grouping) return;
      // Outside a transaction block (the store's thread fences before a BEGIN): an error here is
      // the disk's or the WAL's, and the caller answers every held reply with it.
      await pg._runExclusiveQuery(() => prepared.run(FENCE_SQL, []));
    },
  };
}

/**
 * The embedded store with what the store's thread needs for its group commit (pglite-answer.ts):
 * whether a transaction block is open, and the fence that syncs the commits made since the last
 * one (a no-op unless opened `grouped`, on disk, syncing).
 */
export interface GroupedDb extends Db {
  /** Whether its commits wait for a fence: opened `grouped`, on disk, syncing. */
  readonly grouped: boolean;
  inTransaction(): boolean;
  fence(): Promise<void>;
}
