import { closeSync, fdatasyncSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * EMBEDDED_DB_FSYNC: whether the embedded store makes its writes durable before it answers.
 *
 * PGlite starts Postgres with `-F` (fsync off), and its Node file system (Emscripten's NODEFS)
 * has no `fsync` at all: Postgres' `fdatasync` of the WAL at every commit reached `fd_sync`,
 * found nothing to call and returned success. A committed row was in the operating system's page
 * cache only: it survived the process being killed, not a power loss or a kernel crash.
 *
 * `on` (the default) starts Postgres without `-F` and gives NODEFS the sync it lacks, so
 * Postgres syncs as it does on a server: the WAL before a commit is answered (at the commit
 * itself, or, on the store's thread, once for the commits that came together: the fence below
 * and pglite-answer.ts), data files at each checkpoint, directories when a file is created or
 * renamed. The WAL file is synced with `fsync()` reaching `fdatasync` (below).
 * `off` is PGlite's own start, PostgreSQL's `fsync = off`, with its risk (docs/deployment.md).
 */
export type EmbeddedSync = 'on' | 'off';

/**
 * PGlite's start parameters for a mode: its defaults, without `-F` when syncing. `grouped`: a
 * commit does not wait for its WAL to be synced (`synchronous_commit = off`); whoever answers
 * for the store syncs it before an answer leaves (`FENCE_SQL`, pglite-answer.ts).
 */
export function startParams(sync: EmbeddedSync, defaults: readonly string[], grouped = false): string[] {
  if (sync === 'off') return [...defaults];
  // Emscripten's `fdatasync()` is a stub that returns success without calling the file system;
  // its `fsync()` reaches the stream's `fsync` below. So the WAL is synced with `fsync()`.
  const params = [...defaults.filter((p) => p !== '-F'), '-c', 'wal_sync_method=fsync'];
  return grouped ? [...params, '-c', 'synchronous_commit=off'] : params;
}

/**
 * The group commit's fence: when the WAL holds records not yet synced (commits made with
 * `synchronous_commit = off`), one record more written and the WAL flushed up to it, which syncs
 * every commit before it at once (PostgreSQL 17's `flush` argument of pg_logical_emit_message,
 * a non-transactional message). Run outside a transaction block (pglite-answer.ts fences before
 * a BEGIN). A WAL already synced costs this one statement and no sync.
 */
export const FENCE_SQL = `SELECT pg_logical_emit_message(false, 'fence', '', true)
   WHERE pg_current_wal_insert_lsn() > pg_current_wal_flush_lsn()`;

type Stream = { nfd?: number; node: { mode: number } };
type EmscriptenModule = {
  NODEFS: { stream_ops: Record<string, unknown>; tryFSOperation(f: () => void): void };
  FS: { isDir(mode: number): boolean };
};

/**
 * NODEFS with the `fsync` stream operation Emscripten leaves out. It does what Postgres does
 * natively with `wal_sync_method = fdatasync`: `fdatasync` for a file (its data and the size
 * needed to read it back: the WAL at each commit, data files at a checkpoint) and `fsync` for a
 * directory (its entries: a new WAL segment, a rename). Written here because PGlite offers no
 * durable Node file system (its NodeFS is NODEFS as Emscripten ships it).
 */
export class SyncingNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const addSync = (mod: EmscriptenModule) => {
      mod.NODEFS.stream_ops.fsync = (stream: Stream) => {
        const fd = stream.nfd;
        if (fd === undefined) return 0;
        // tryFSOperation turns Node's error (EIO, ENOSPC) into the errno Postgres reads: it then
        // PANICs, as it must when a sync fails, rather than carry on over lost writes.
        mod.NODEFS.tryFSOperation(() => (mod.FS.isDir(stream.node.mode) ? fsyncSync(fd) : fdatasyncSync(fd)));
        return 0;
      };
    };
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...((emscriptenOpts.preRun as unknown[] | undefined) ?? []), addSync],
      } as typeof emscriptenOpts,
    };
  }
}

/**
 * Syncs a new data directory whole, once: initdb (in a child) and the template's untar write its
 * files without syncing them, and Postgres syncs only what it writes itself from then on. Each
 * file, then each directory (children before parents), then the directory that holds it.
 */
export function syncTree(root: string): void {
  const syncPath = (path: string) => {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) syncPath(path);
    }
    syncPath(dir);
  };
  walk(root);
  syncPath(dirname(root));
}
