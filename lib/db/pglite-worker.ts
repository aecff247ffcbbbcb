import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, receiveMessageOnPort, Worker, workerData } from 'node:worker_threads';
import type { Db, Queryable } from './db.ts';
import { type GroupedDb, openPglite } from './pglite.ts';
import type { EmbeddedSync } from './pglite-sync.ts';

/**
 * The embedded store on its own thread. PGlite is Postgres compiled to WebAssembly and runs
 * where it is called: on the request thread, every statement (and every page it reads) stalls
 * every request for as long as it takes, and the quotes waited behind the orders' writes. Here
 * it runs in a worker thread, so the request thread only sends statements and awaits rows, and
 * on a machine with two cores the store and the requests run at once.
 *
 * Written by hand because no library does this for PGlite: its own worker (`PGliteWorker`) is
 * built for browsers (Web Locks, BroadcastChannel). The protocol is one message per statement,
 * run in the order sent; a transaction is BEGIN, the caller's statements, then COMMIT or
 * ROLLBACK, and nothing else is sent in between (PGlite is one connection: its own mutex does
 * the same in-thread).
 */

import { errorReply, type Message, type Reply, type Request, storeAnswerer } from './pglite-answer.ts';

/**
 * Gives this thread (not the process) the niceness `nice` (EMBEDDED_DB_NICE, 0 by default). On
 * two cores the store's thread and the request thread compete; niced, the store yields the core
 * when both want it and keeps it when the request thread is idle. Measured, that did not win
 * alternated rounds by more than they differed, so it is off unless asked for
 * (docs/performance.md, "Fifth pass"). Linux gives each thread its own niceness: setpriority
 * with a thread's id changes that thread only, and a process may always raise its own. Elsewhere
 * (no /proc/thread-self) the thread keeps the process's priority.
 */
function lowerThisThreadsPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // Not Linux, or not allowed: the store runs at the process's priority.
  }
}

/** The worker's side: opens the store, then answers each message. */
async function serve({ dataDir, nice, template, sync, grouped }: StoreThreadData): Promise<void> {
  const port = parentPort;
  if (!port) return;
  if (nice) lowerThisThreadsPriority(nice);
  let db: GroupedDb;
  try {
    db = await openPglite(dataDir, { template, sync, grouped });
  } catch (err) {
    port.postMessage(errorReply(0, err));
    return;
  }
  // The open's reply says how the data directory was made (Db.madeFrom), in its one row.
  port.postMessage({ id: 0, rows: db.madeFrom ? [{ madeFrom: db.madeFrom }] : [] } satisfies Reply);

  const answer = storeAnswerer(db, {
    post: (r) => port.postMessage(r),
    receive: () => receiveMessageOnPort(port)?.message as Request | undefined,
    close: () => port.close(),
  });
  port.on('message', answer);
}

type StoreThreadData = {
  pgliteWorker: true;
  dataDir: string | undefined;
  nice: number;
  template: string | undefined;
  sync: EmbeddedSync;
  grouped: boolean;
};
if (!isMainThread && (workerData as StoreThreadData | null)?.pgliteWorker) {
  void serve(workerData as StoreThreadData);
}

/**
 * Starts the worker running `module` (this file) with `workerData`. The default runs the
 * compiled module (dist/), or the source under a loader the process was started with (tsx's
 * flags pass on to workers); a test from source passes one that registers its loader first.
 */
export type SpawnStoreThread = (module: URL, workerData: unknown) => Worker;
const spawnModule: SpawnStoreThread = (module, workerData) => new Worker(module, { workerData });

/**
 * The embedded store, run by a worker thread (see above): the same `Db` as `openPglite`, the
 * same SQL, the same data directory.
 */
export async function openPgliteWorker(
  dataDir: string | undefined,
  {
    nice = 0,
    spawn = spawnModule,
    template,
    sync = 'on',
    grouped = sync === 'on',
  }: {
    nice?: number;
    spawn?: SpawnStoreThread;
    template?: string | undefined;
    sync?: EmbeddedSync;
    grouped?: boolean;
  } = {},
): Promise<Db> {
  const worker = spawn(new URL(import.meta.url), {
    pgliteWorker: true,
    dataDir,
    nice,
    template,
    sync,
    grouped,
  } satisfies StoreThreadData);
  const pending = new Map<number, { resolve(rows: unknown[]): void; reject(err: Error): void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const settle = (r: Reply) => {
    const p = pending.get(r.id);
    if (!p) return;
    pending.delete(r.id);
    // Idle, the worker does not keep the process alive (an in-thread store does not either).
    if (pending.size === 0) worker.unref();
    if (r.error) p.reject(Object.assign(new Error(r.error.message), r.error.props));
    else p.resolve(r.rows ?? []);
  };
  const failAll = (err: Error) => {
    failure = err;
    for (const id of [...pending.keys()]) settle({ id, error: { message: err.message, props: {} } });
  };
  worker.on('message', settle);
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the embedded store's thread exited (${code})`)));

  const replyTo = (id: number): Promise<unknown[]> =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
    });
  const send = (m: Message): Promise<unknown[]> => {
    const id = ++nextId;
    const reply = replyTo(id);
    // The message is the caller's own literal: given its id in place, since a clone that is then
    // extended gets a hidden class of its own in V8 (docs/performance.md, "Fifth pass").
    if (!failure) worker.postMessage(Object.assign(m, { id }) satisfies Request);
    return reply;
  };
  // Reply 0 is the worker's, once the store is open (or why it did not open).
  let opened: unknown[];
  try {
    opened = await replyTo(0);
  } catch (err) {
    await worker.terminate();
    throw err;
  }

  // One connection. A statement outside a transaction is sent at once, even while others are
  // on their way: the worker runs them in the order they arrive (PGlite's own mutex is FIFO),
  // so its thread goes from one to the next without waiting for this thread to read a reply
  // and send the next (a round trip per statement, during which the store's thread sat idle;
  // docs/performance.md, "ACP", fourth pass). A transaction takes the connection alone: it
  // starts after what was sent before it, and what comes while it is queued or running waits
  // for its COMMIT or ROLLBACK.
  let turn: Promise<unknown> = Promise.resolve();
  let transactions = 0;
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    transactions++;
    const run = turn.then(fn, fn).finally(() => transactions--);
    turn = run.catch(() => undefined);
    return run;
  };
  const statement: Queryable['query'] = async <R>(sql: string, params: readonly unknown[] = []) =>
    (await send({ op: 'query', sql, params })) as R[];
  const shared: Queryable['query'] = <R>(sql: string, params: readonly unknown[] = []) => {
    if (transactions === 0) return statement<R>(sql, params);
    const run = turn.then(() => statement<R>(sql, params));
    turn = run.catch(() => undefined);
    return run;
  };

  const madeFrom = (opened[0] as { madeFrom?: 'template' | 'initdb' } | undefined)?.madeFrom;
  return {
    kind: 'pglite',
    ...(madeFrom ? { madeFrom } : {}),
    query: shared,
    exec: (sql) => exclusive(async () => void (await send({ op: 'exec', sql }))),
    transaction: (fn) =>
      exclusive(async () => {
        await statement('BEGIN');
        try {
          const result = await fn({ query: statement });
          await statement('COMMIT');
          return result;
        } catch (err) {
          await statement('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    ping: () => exclusive(async () => void (await statement('SELECT 1'))),
    close: () =>
      exclusive(async () => {
        await send({ op: 'close' });
        await worker.terminate();
      }),
  };
}
