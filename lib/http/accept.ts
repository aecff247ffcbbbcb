import { spawn } from 'node:child_process';
import { Server, type Socket } from 'node:net';

/**
 * More than one accepted connection per turn of the event loop (issue 48).
 *
 * Since libuv 1.45 (Node 20), a listening socket accepts ONE connection per turn of the loop
 * ("unix: don't accept() connections in a loop", libuv #3696): the loop's poll wakes for the
 * listening descriptor, libuv accepts once and relies on level-triggered polling to come back
 * for the next on the next turn. Idle, a turn is microseconds. Under load a turn runs every
 * callback that is ready, 10–40 ms here, and a burst of new connections waits in the kernel's
 * accept queue one turn each. That burst is exactly what a replica meets when it turns ready:
 * the proxy or client pool in front opens connections as it needs them (Envoy's HTTP/1.1 pool,
 * undici's), and the new process answers its first requests slower than a warm one, so the pool
 * grows by hundreds at once. Measured (docs/performance.md, "Second 0 was the accept queue"):
 * 226 connections queued in the listening socket (`ss -ltn`), drained one per turn over ~3 s,
 * each connection's first request waiting 1–4 s while requests on accepted connections took
 * tens of ms: second 0's p99.
 *
 * Node 22.12+ can open several listening sockets on one port (`reusePort`); this system runs on
 * Node 20, where the only way to have one listening socket polled several times per turn is
 * several descriptors of it. Node has no dup(2), so a short-lived child process receives the
 * listening handle over its IPC channel (SCM_RIGHTS: how Node's cluster module hands workers a
 * listening handle) and sends it straight back, each round trip a new descriptor of the same
 * socket and the same accept queue. Each becomes a net.Server that hands its connections to the
 * application's server (its `connection` event, as node:http and node:tls accept sockets from
 * any source), and the connection is counted as the server's: the server's close waits for it,
 * as for one it accepted itself. With `count` extra descriptors a busy turn accepts up to
 * `count + 1` connections. When the queue is empty none is ready (level-triggered readiness): a
 * server whose callers keep their connections pays nothing; one new connection costs up to
 * `count` accept() calls that find the queue empty (EAGAIN, a microsecond each). No library does
 * this for Node 20; the child runs nothing but the round trip below and exits.
 */

/** node:net's own accounting of a server's connections (what its close() waits for). */
type Counted = Server & { _connections: number };
type Owned = Socket & { server: Server; _server: Server };

/** The child: sends every handle it receives back to its parent, and exits after the last. */
const ROUND_TRIP = `process.on('message', (m, h) => process.send(m, h, () => { if (m.last) process.exit(0); }));`;

export interface AcceptHandles {
  /** How many extra descriptors accept beside the server's own. */
  readonly count: number;
  /**
   * Stops them accepting at once (the server's own close stops the rest). Their connections
   * belong to the server, which ends them as it closes: this does not wait for them.
   */
  close(): void;
}

/**
 * Adds `count` descriptors of `server`'s listening socket that accept into it. Resolves with
 * fewer (0) rather than failing: if the child cannot be started or does not answer within
 * `timeoutMs`, the server keeps accepting on its own descriptor, as without this.
 */
export async function addAcceptHandles(
  server: Server,
  count: number,
  o: { timeoutMs?: number; onError?: (err: unknown) => void } = {},
): Promise<AcceptHandles> {
  const extras: Server[] = [];
  const own = (server as unknown as { _handle?: object | null })._handle;
  if (count > 0 && own) {
    try {
      const options = server as unknown as { keepAlive?: boolean; keepAliveInitialDelay?: number };
      for (const handle of await roundTrips(own, count, o.timeoutMs ?? 5000)) {
        // As node:http's server sets up its sockets (no Nagle; keep-alive as the server has it).
        const extra = new Server({
          noDelay: true,
          keepAlive: options.keepAlive ?? false,
          keepAliveInitialDelay: options.keepAliveInitialDelay ?? 0,
        });
        extra.on('connection', (socket: Socket) => {
          // The server's connection, not this descriptor's: node:net counts a connection on the
          // server that accepted it (its close() waits until those end, and the socket uncounts
          // itself from `_server` when destroyed). Moved, so that the server's close (Fastify's
          // close, a SIGTERM's drain) waits for the in-flight requests of every descriptor's
          // connections, not only its own. These fields are node:net's since Node 0.x; the
          // shutdown test (test/foundation/accept.test.ts) fails if they ever move.
          (extra as Counted)._connections--;
          (server as Counted)._connections++;
          (socket as Owned).server = server;
          (socket as Owned)._server = server;
          server.emit('connection', socket);
        });
        extra.on('error', (err) => o.onError?.(err));
        extra.listen(handle as never);
        extras.push(extra);
      }
    } catch (err) {
      o.onError?.(err);
    }
  }
  return {
    count: extras.length,
    close: () => {
      for (const s of extras.splice(0)) s.close();
    },
  };
}

/** `count` new descriptors of `handle`, each sent to a child and back. */
function roundTrips(handle: object, count: number, timeoutMs: number): Promise<object[]> {
  return new Promise((resolve, reject) => {
    const got: object[] = [];
    let settled = false;
    const closeHandle = (h: object) => (h as { close?: () => void }).close?.();
    const child = spawn(process.execPath, ['-e', ROUND_TRIP], {
      // Nothing of the parent's preloads: the child only passes handles back.
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill();
      for (const h of got.splice(0)) closeHandle(h);
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`no handle back within ${timeoutMs} ms`)), timeoutMs);
    child.on('error', fail);
    child.on('message', (_m, h) => {
      if (!h) return;
      // One still in the pipe when it failed is closed too: a descriptor nobody closes would
      // keep the socket listening after the server closed.
      if (settled) closeHandle(h);
      else got.push(h);
    });
    // Resolved once the child is gone and its channel read to the end ('close'): while it lives
    // it holds a descriptor of the socket too, and a socket some process still holds keeps
    // taking connections into its queue after the server has closed.
    child.on('close', (code) => {
      if (settled) return;
      if (got.length < count)
        return fail(new Error(`the handle child ended (${code}) after ${got.length} of ${count}`));
      settled = true;
      clearTimeout(timer);
      resolve(got);
    });
    for (let i = 0; i < count; i++) child.send({ i, last: i === count - 1 }, handle as never);
  });
}
