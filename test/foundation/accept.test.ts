/**
 * More than one accepted connection per turn of the event loop (lib/http/accept.ts, issue 48).
 * On Node 20 a listening socket accepts one connection per turn; with extra descriptors of it a
 * turn accepts one per descriptor. Each test queues connections in the kernel while this
 * process's loop is held (a child connects them; the loop waits, synchronously, for its word
 * that all are connected), then counts what the next turn accepted before its check phase.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { addAcceptHandles } from '../../lib/http/accept.ts';

/** A child that opens `n` connections to `port`, sends each `send`, and touches `marker` once all are open. */
const CONNECTOR = `
const net = require('node:net'); const fs = require('node:fs');
const [port, n, marker, send] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3], process.argv[4]];
let open = 0; const answers = [];
for (let i = 0; i < n; i++) {
  const s = net.connect(port, '127.0.0.1', () => {
    if (send) s.write(send);
    if (++open === n) fs.writeFileSync(marker, '');
  });
  s.setEncoding('utf8');
  s.on('data', (d) => { answers.push(d.split('\\r\\n')[0]); if (answers.length === n) { console.log(JSON.stringify(answers)); process.exit(0); } });
  s.on('error', (e) => { console.log(JSON.stringify({ error: e.code })); process.exit(1); });
}`;

/**
 * Queues `n` connections to `port` while this thread's loop is held, then resolves with how many
 * the first turn after it accepted (`accepted()` read in that turn's check phase) and, once every
 * connection is answered, the first line each got back.
 */
async function burst(port: number, n: number, accepted: () => number, send = '') {
  const marker = join(mkdtempSync(join(tmpdir(), 'ac-accept-')), 'open');
  const child = spawn(process.execPath, ['-e', CONNECTOR, String(port), String(n), marker, send], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  // Hold the loop until the child has all its connections open: they wait in the accept queue.
  const deadline = Date.now() + 20_000;
  while (!existsSync(marker)) if (Date.now() > deadline) throw new Error('the connector never connected');
  // From this turn's check phase to the next turn's: exactly one poll phase, where accepts run.
  const firstTurn = await new Promise<number>((resolve) =>
    setImmediate(() => {
      const before = accepted();
      setImmediate(() => resolve(accepted() - before));
    }),
  );
  await new Promise((resolve) => child.on('exit', resolve));
  return { firstTurn, answers: JSON.parse(out) as string[] | { error: string } };
}

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
    const refused = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve('connected'));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('does not fail the server when no descriptor comes back: it accepts on its own', async () => {
    const { server, port, accepted } = await echoServer();
    const errors: unknown[] = [];
    // A server that is not listening has no handle to pass on.
    const idle = createServer();
    const none = await addAcceptHandles(idle, 4, { onError: (e) => errors.push(e) });
    expect(none.count).toBe(0);
    const { answers } = await burst(port, 3, accepted);
    expect(answers).toEqual(Array(3).fill('hello'));
    expect(server.listening).toBe(true);
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
    await new Promise<void>((resolve, reject) =>
      request(`${sys?.url}/readyz`, (res) => (res.statusCode === 200 ? resolve() : reject(res.statusCode)))
        .on('error', reject)
        .end(),
    );
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
    const refused = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve('connected'));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
