/**
 * Slow clients: connections that trickle their headers or their body byte by byte are cut
 * off by the server's time limits (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS; Node
 * answers 408 and closes), never reach a handler, and do not hold up other requests. The
 * system runs in process here with short limits; the limits are the same code in every
 * process (lib/http/app.ts).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';

const HEADERS_MS = 1000;
const REQUEST_MS = 2000;
const SLOW = 15;
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startEmbedded({
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    RATE_LIMIT_CAPACITY: '100000',
  });
});
afterAll(() => sys.close());

interface SlowResult {
  /** ms from the first byte sent until the server closed the connection (Infinity: never). */
  readonly closedAfterMs: number;
  readonly answer: string;
}

/** Sends `head` at once, then one byte of `drip` every `everyMs` until the server hangs up or `giveUpMs`. */
function slowClient(head: string, drip: string, everyMs: number, giveUpMs: number): Promise<SlowResult> {
  return new Promise((resolve) => {
    const { port } = new URL(sys.url);
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let i = 0;
    let started = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedAfterMs: number) => {
      clearInterval(timer);
      socket.destroy();
      resolve({ closedAfterMs, answer });
    };
    socket.on('connect', () => {
      started = Date.now();
      socket.write(head);
      timer = setInterval(() => {
        if (Date.now() - started > giveUpMs) return finish(Number.POSITIVE_INFINITY);
        if (!socket.destroyed) socket.write(drip[i++ % drip.length] as string);
      }, everyMs);
    });
    socket.on('data', (d) => {
      answer += d.toString();
    });
    socket.on('close', () => finish(Date.now() - started));
    socket.on('error', () => {});
  });
}

async function timedFetch(path: string, init?: RequestInit): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const res = await fetch(`${sys.url}${path}`, init);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t };
}

const order = (i: number) =>
  timedFetch('/v2/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-spiffe-id': `${AGENT}/steady-${i}` },
    body: '{"agent_id":"agent-steady-01","sku":"SKU-ABC-123456","quantity":1,"max_budget_usd":10}',
  });

describe('slow clients', () => {
  it('cuts off slow-header and slow-body clients with 408 while other requests keep being served', async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) baseline.push((await order(i)).ms);

    const slowHeaders = Array.from({ length: SLOW }, (_, i) =>
      slowClient(
        `POST /v2/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nx-trace-id: slow-header-${i}\r\n`,
        'x-slow: abc\r\n',
        100,
        8000,
      ),
    );
    const body = '{"agent_id":"agent-slow-0001","sku":"SKU-ABC-123456","quantity":1,"max_budget_usd":10}';
    const slowBodies = Array.from({ length: SLOW }, (_, i) =>
      slowClient(
        `POST /v2/orders HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-spiffe-id: ${AGENT}/slow-${i}\r\nx-trace-id: slow-body-${i}\r\ncontent-length: ${body.length}\r\n\r\n`,
        body,
        150,
        8000,
      ),
    );
    // Steady traffic while the slow connections are open.
    const during: { status: number; ms: number }[] = [];
    const steady = (async () => {
      for (let i = 0; i < 40; i++) {
        during.push(await order(100 + i));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const [headers, bodies] = await Promise.all([Promise.all(slowHeaders), Promise.all(slowBodies), steady]);

    // Cut off: within the limit plus Node's checking interval (half the headers limit) and slack.
    for (const r of headers) {
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
      expect(r.closedAfterMs).toBeLessThan(HEADERS_MS + 2500);
      expect(r.answer).toMatch(/^(HTTP\/1\.1 408|$)/);
    }
    for (const r of bodies) {
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
      expect(r.closedAfterMs).toBeLessThan(REQUEST_MS + 2500);
      expect(r.answer).toMatch(/^(HTTP\/1\.1 408|$)/);
    }
    // Never reached a handler: no order, no audit entry for them.
    const audited = await sys.platform.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM agent_audit_log WHERE trace_id LIKE 'slow-%'",
    );
    expect(Number(audited[0]?.n)).toBe(0);

    // Others kept being served, none slowed to anything near the limits.
    expect(during.every((r) => r.status === 201)).toBe(true);
    const p = (xs: number[], q: number) =>
      [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] as number;
    console.log(
      `slow clients: ${SLOW} slow-header + ${SLOW} slow-body connections; steady orders p50 ${p(baseline, 0.5).toFixed(1)} ms before, ${p(
        during.map((r) => r.ms),
        0.5,
      ).toFixed(1)} ms during (max ${Math.max(...during.map((r) => r.ms)).toFixed(1)} ms)`,
    );
    expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(HEADERS_MS);
  }, 30_000);
});
