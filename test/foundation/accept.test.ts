/**
 * More than one accepted connection per turn of the event loop (lib/http/accept.ts, issue 48).
 * On Node 20 a listening socket accepts one connection per turn; with extra descriptors of it a
 * turn accepts one per descriptor. Each test queues connections in the kernel while this
 * process's loop is held (a child connects them; the loop waits, synchronously, for its word
 * that all are connected), then counts what the next turn accepted before its check phase.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as undiciRequest } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { makeCertificates } from '../procurement/support/certs.ts';

/** /readyz's status through `dispatcher` (ready waits for the extra descriptors). */
/**
 * /readyz's answer once it says ready, or its last within 30 s: readiness waits for the extra
 * descriptors, which a short-lived child hands back, so on a busy machine the first answer after
 * the start can still be 503 (the subject here is what they accept, not how soon).
 */
async function readyOver(url: string, dispatcher: Agent): Promise<number> {
  const deadline = Date.now() + 30_000;
  let status = 0;
  do {
    const res = await undiciRequest(`${url}/readyz`, { dispatcher });
    await res.body.dump();
    status = res.statusCode;
    if (status !== 200) await new Promise((r) => setTimeout(r, 50));
  } while (status !== 200 && Date.now() < deadline);
  await dispatcher.close();
  return status;
}

import { addAcceptHandles } from '../../lib/http/accept.ts';

/**
 * A child that opens `n` connections to `port` (TLS when given a CA file), sends each `send`, and
 * touches `marker` once all are open (TCP: the TLS handshakes wait for the server's loop).
 */
const CONNECTOR = `
const net = require('node:net'); const tls = require('node:tls'); const fs = require('node:fs');
const [port, n, marker, send, caFile] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3], process.argv[4], process.argv[5]];
let open = 0; const answers = [];
const opened = () => { if (++open === n) fs.writeFileSync(marker, ''); };
for (let i = 0; i < n; i++) {
  const s = caFile
    ? tls.connect({ port, host: '127.0.0.1', ca: fs.readFileSync(caFile), servername: 'localhost' }, () => s.write(send))
    : net.connect(port, '127.0.0.1', () => { if (send) s.write(send); opened(); });
  if (caFile) s.on('connect', opened);
  s.setEncoding('utf8');
  s.on('data', (d) => { answers.push(d.split('\\r\\n')[0]); if (answers.length === n) { console.log(JSON.stringify(answers)); process.exit(0); } });
  s.on('error', (e) => { console.log(JSON.stringify({ error: e.code })); process.exit(1); });
}`;

/**
 * Queues `n` connections to `port` while this thread's loop is held, then resolves with the most
 * one turn of the loop accepted of them (`accepted()` read in each turn's check phase) and, once
 * every connection is answered, the first line each got back.
 */
async function burst(port: number, n: number, accepted: () => number, send = '', caFile = '') {
  const marker = join(mkdtempSync(join(tmpdir(), 'ac-accept-')), 'open');
  const child = spawn(process.execPath, ['-e', CONNECTOR, String(port), String(n), marker, send, caFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  // Listened for at once: with the connections answered fast, the child may be gone before the
  // turns below are counted.
  const exited = new Promise((resolve) => child.on('close', resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  // Hold the loop until the child has all its connections open: they wait in the accept queue.
  const deadline = Date.now() + 20_000;
  while (!existsSync(marker)) if (Date.now() > deadline) throw new Error('the connector never connected');
  // Accepts run in a turn's poll phase; between two check phases (setImmediate) there is one, and
  // from here to the first check at most one. The most accepted in any of these is one turn's.
  let last = accepted();
  const turns: number[] = [];
  await new Promise<void>((resolve) => {
    const next = () =>
      setImmediate(() => {
        turns.push(accepted() - last);
        last = accepted();
        if (turns.length < 2 * n) next();
        else resolve();
      });
    next();
  });
  const firstTurn = Math.max(...turns);
  await exited;
  return { firstTurn, answers: JSON.parse(out) as string[] | { error: string } };
}

/** What a connection to `port` meets: `connected`, or its error's code. */
const connectOutcome = (port: number) =>
  new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      resolve('connected');
      s.destroy();
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });

describe('extra accept descriptors', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  async function echoServer(): Promise<{ server: Server; port: number; accepted: () => number }> {
    let n = 0;
    const server = createServer((s) => {
      n++;
      s.end('hello\r\n');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as { port: number }).port, accepted: () => n };
  }

  it('a turn of a plain server accepts one queued connection (the behaviour this works around)', async () => {
    const { port, accepted } = await echoServer();
    const { firstTurn, answers } = await burst(port, 12, accepted);
    expect(firstTurn).toBe(1);
    expect(answers).toEqual(Array(12).fill('hello'));
  });

  it('with 4 extra descriptors a turn accepts 5, and every connection reaches the one server', async () => {
    const { server, port, accepted } = await echoServer();
    const extra = await addAcceptHandles(server, 4);
    expect(extra.count).toBe(4);
    const { firstTurn, answers } = await burst(port, 12, accepted);
    expect(firstTurn).toBe(5);
    expect(answers).toEqual(Array(12).fill('hello'));
    extra.close();
  });

  it('once closed, the extra descriptors accept nothing: the port refuses when the server closes', async () => {
    const { server, port } = await echoServer();
    const extra = await addAcceptHandles(server, 3);
    extra.close();
    servers.splice(0);
    await new Promise((r) => server.close(r));
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
  });

  it('does not fail the server when no descriptor comes back in time: it accepts on its own', async () => {
    const { server, port, accepted } = await echoServer();
    const errors: unknown[] = [];
    const none = await addAcceptHandles(server, 4, { timeoutMs: 1, onError: (e) => errors.push(e) });
    expect(none.count).toBe(0);
    expect(String(errors[0])).toMatch(/no handle back within 1 ms/);
    const { firstTurn, answers } = await burst(port, 3, accepted);
    expect(firstTurn).toBe(1);
    expect(answers).toEqual(Array(3).fill('hello'));
  });

  it("counts their connections as the server's: its close waits for their requests", async () => {
    const held: (() => void)[] = [];
    let requests = 0;
    const server = createHttpServer((_req, res) => {
      requests++;
      held.push(() => res.end('done'));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const extra = await addAcceptHandles(server, 4);
    let connections = 0;
    server.on('connection', () => connections++);
    const port = (server.address() as { port: number }).port;
    const sent = burst(port, 10, () => connections, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    await vi.waitFor(() => expect(requests).toBe(10));
    // node:net's count of the server's connections (what its close waits for): all ten.
    expect(await new Promise((r) => server.getConnections((_e, n) => r(n)))).toBe(10);
    extra.close();
    let closed = false;
    servers.splice(0);
    server.close(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(false);
    for (const answer of held) answer();
    const { answers } = await sent;
    expect(answers).toEqual(Array(10).fill('HTTP/1.1 200 OK'));
    await vi.waitFor(() => expect(closed).toBe(true));
  });
});

describe('the system accepts wide (ACCEPT_HANDLES)', () => {
  let sys: TestSystem | undefined;
  afterEach(async () => {
    await sys?.close();
    sys = undefined;
  });

  it('serves requests over connections its extra descriptors accepted, counts them in a gauge, and stops them on close', async () => {
    sys = await startEmbedded({ ACCEPT_HANDLES: '6' });
    const port = Number(new URL(sys.url).port);
    // Ready waits for the extra descriptors (they are added once the server listens).
    expect(await readyOver(sys.url, new Agent())).toBe(200);
    let accepted = 0;
    sys.app.server.on('connection', () => accepted++);
    const { firstTurn, answers } = await burst(
      port,
      10,
      () => accepted,
      'GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
    );
    expect(firstTurn).toBe(7);
    expect(answers).toEqual(Array(10).fill('HTTP/1.1 200 OK'));
    const metrics = await (await fetch(`${sys.url}/metrics`)).text();
    expect(metrics).toMatch(/^http_accept_handles 7$/m);
    await sys.close();
    sys = undefined;
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
  });

  it('under TLS too: the connections they accept are handshaken and served by the one server', async () => {
    const certs = makeCertificates();
    sys = await startEmbedded({
      ACCEPT_HANDLES: '3',
      TLS_CERT_FILE: certs.server.certFile,
      TLS_KEY_FILE: certs.server.keyFile,
      TLS_CA_FILE: certs.ca.certFile,
      TLS_CLIENT_CERT: 'optional',
    });
    const ready = await readyOver(sys.url, new Agent({ connect: { ca: certs.ca.cert } }));
    expect(ready).toBe(200);
    let accepted = 0;
    sys.app.server.on('connection', () => accepted++);
    const { firstTurn, answers } = await burst(
      Number(new URL(sys.url).port),
      8,
      () => accepted,
      'GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n',
      certs.ca.certFile,
    );
    expect(firstTurn).toBe(4);
    expect(answers).toEqual(Array(8).fill('HTTP/1.1 200 OK'));
  });
});
