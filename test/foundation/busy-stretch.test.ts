/**
 * The event loop's busy stretch (lib/http/busy-stretch.ts, issue 48): how long the loop has run
 * without once waiting for I/O, and the time since the check phase two turns ago, bound how long
 * a request read now has waited since it arrived, its time in the socket included. Requests that
 * arrived while the loop was held are shed by it when their class's budget is shorter, though the
 * loop's mean delay (under-pressure) never read a window over the budget; once the loop waits
 * again they are served.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type LoopReader, loopPressure, standingOver } from '../../lib/http/busy-stretch.ts';
import { registerShedding } from '../../lib/http/shed.ts';

/** Holds this thread for `ms`, reading `read` every 5 ms as requests would. */
function hold(ms: number, read: () => unknown): void {
  const end = performance.now() + ms;
  let next = performance.now();
  while (performance.now() < end) {
    if (performance.now() >= next) {
      read();
      next += 5;
    }
  }
}

/**
 * A reading once the loop has waited: read every 20 ms until the stretch is under 10 ms, at most
 * 20 times (this worker's own start, or a loaded machine, can keep its loop busy a while).
 */
async function settled(read: LoopReader['read']) {
  let r = read();
  for (let i = 0; i < 20 && r.stretch >= 10; i++) {
    await sleep(20);
    r = read();
  }
  return r;
}

describe('the busy stretch', () => {
  let reader: LoopReader | undefined;
  const pressureOf = (windowMs: number) => {
    reader = loopPressure(windowMs);
    return reader.read;
  };
  afterEach(() => reader?.stop());

  it('grows while the loop is held, covers the hold, and starts again once the loop waits', async () => {
    const pressure = pressureOf(50);
    const idle = await settled(pressure);
    expect(idle.stretch).toBeLessThan(10);
    hold(150, pressure);
    const held = pressure();
    expect(held.stretch).toBeGreaterThanOrEqual(150);
    expect(held.utilisation).toBeGreaterThanOrEqual(0.9);
    const after = await settled(pressure);
    expect(after.stretch).toBeLessThan(10);
    expect(after.utilisation).toBeLessThan(held.utilisation);
  });

  it('does not count busy time from before the loop last waited (no request read in between)', async () => {
    const pressure = pressureOf(500);
    pressure();
    // Another route's work (or a collection) with no request read, then a quiet spell.
    hold(600, () => {});
    await sleep(100);
    // The first reading after the quiet spell (a later one would start from this one).
    const quiet = pressure();
    expect(quiet.stretch).toBeLessThan(100);
    expect(standingOver(quiet, 30)).toBe(false);
  });

  it('bounds by two turns a request read in a loop that never idles', async () => {
    const pressure = pressureOf(50);
    // Turns of ~3 ms each, never waiting for I/O (a pending setImmediate keeps the poll from blocking).
    for (let i = 0; i < 40; i++) {
      hold(3, pressure);
      await new Promise((r) => setImmediate(r));
    }
    const busy = pressure();
    expect(busy.stretch).toBeGreaterThanOrEqual(100);
    // At least the two turns it spans (an upper bound), far under the stretch.
    expect(busy.turns).toBeGreaterThanOrEqual(3);
    expect(busy.turns).toBeLessThan(50);
  });

  it.each([
    // stretch ms, two turns ms, utilisation, budget ms, shed
    [40, 40, 0.95, 30, true],
    [31, Number.POSITIVE_INFINITY, 1, 30, true],
    [30, 60, 1, 30, false],
    [400, 12, 1, 30, false],
    [40, 40, 0.5, 30, false],
    [40, 40, 0.89, 30, false],
    [10, 10, 1, 30, false],
    [400, 400, 1, 0, false],
  ])(
    'stretch %d ms, two turns %d ms, utilisation %d, budget %d ms: shed %s',
    (stretch, turns, utilisation, budget, shed) => {
      expect(standingOver({ stretch, turns, utilisation }, budget)).toBe(shed);
    },
  );
});

/**
 * A client in another process: it opens `n` kept-alive connections (one GET each), then once
 * told "go" on stdin, after 30 ms it sends `n` GETs at once on them and prints their statuses.
 */
const CLIENT = `
const [url, n] = process.argv.slice(1);
const send = () => Promise.all(Array.from({ length: Number(n) }, () =>
  fetch(url).then(async (r) => ({ status: r.status, body: await r.text(), retry: r.headers.get('retry-after') }))));
send().then(() => process.stdout.write('ready\\n'));
process.stdin.once('data', async () => {
  await new Promise((r) => setTimeout(r, 30));
  const all = await send();
  process.stdout.write(JSON.stringify(all) + '\\n');
});`;

async function statusesWhileHeld(url: string, n: number, holdMs: number) {
  const child = spawn(process.execPath, ['-e', CLIENT, url, String(n)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    let out = '';
    const lines = new Promise<string[]>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const done = out.split('\n').slice(0, -1);
        if (done.length === 2) resolve(done);
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`client exited ${code}: ${out}`)));
    });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdin.write('go\n');
    // The requests arrive while this thread (the server's) is held: they wait in their sockets.
    hold(holdMs, () => {});
    const [, result] = await lines;
    return JSON.parse(result as string) as { status: number; body: string; retry: string | null }[];
  } finally {
    child.kill();
  }
}

/**
 * The status of a GET once the loop has waited again: retried every 100 ms, at most 20 times
 * (the half second after a held loop stays busy by the utilisation's measure, and a loaded test
 * machine can keep a stretch over the budget a while longer).
 */
async function servedSoon(url: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 20 && status !== 200; i++) {
    await sleep(100);
    status = (await fetch(url)).status;
  }
  return status;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(busyStretch: boolean): Promise<string> {
  app = Fastify();
  registerShedding(app, {
    budgetsMs: { quote: 20 },
    // The mean delay's first window ends after the test: only the stretch can shed here.
    sampleMs: 60_000,
    retryAfterSeconds: 1,
    busyStretch: busyStretch ? ['quote'] : [],
    classify: (req) =>
      req.url === '/quote'
        ? {
            class: 'quote',
            answer: (reply) => {
              reply.type('application/problem+json');
              return { status: 503, title: 'shed' };
            },
          }
        : undefined,
    metrics: new Registry(),
  });
  app.get('/quote', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/quote`;
}

describe('shedding on the busy stretch', () => {
  it('sheds the requests that waited in their sockets past the budget, then serves once the loop waits', async () => {
    const url = await serve(true);
    const held = await statusesWhileHeld(url, 8, 1000);
    expect(held.map((r) => r.status)).toEqual(Array(8).fill(503));
    expect(held[0]?.retry).toBe('1');
    expect(JSON.parse(held[0]?.body as string)).toEqual({ status: 503, title: 'shed' });
    expect(await servedSoon(url)).toBe(200);
  });

  it('without it the same requests are all served late: the loop mean alone does not see them', async () => {
    const url = await serve(false);
    const held = await statusesWhileHeld(url, 8, 1000);
    expect(held.map((r) => r.status)).toEqual(Array(8).fill(200));
  });
});

describe('the system sheds quotes on the busy stretch by default', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    // The quote's budget alone: the loop's mean is first read after 10 s and the gate is off.
    sys = await startEmbedded({
      SHED_QUOTE_BUDGET_MS: '30',
      SHED_SAMPLE_MS: '10000',
      SHED_QUOTE_CONCURRENCY: '0',
    });
  });
  afterAll(() => sys?.close());

  it('answers the quotes that waited in their sockets 503 with a problem, then serves', async () => {
    const [row] = await sys.platform.db.query<{ sku: string }>(
      'SELECT sku FROM catalog_products ORDER BY sku LIMIT 1',
    );
    const url = `${sys.url}/cart/quote?line=${row?.sku}:1&currency=USD&region=US`;
    // This process is the system's: its start and the query above keep the loop busy, longer on
    // a loaded machine (the full suite: one such start was still busy 100 ms later); once it has
    // waited, a quote is served. (That a quiet spell ends a stretch is the reader's test above.)
    expect(await servedSoon(url)).toBe(200);
    const held = await statusesWhileHeld(url, 4, 1000);
    expect(held.map((r) => r.status)).toEqual(Array(4).fill(503));
    expect(held[0]?.retry).toBe('1');
    expect(JSON.parse(held[0]?.body as string)).toMatchObject({ status: 503 });
    expect(await servedSoon(url)).toBe(200);
  });
});
