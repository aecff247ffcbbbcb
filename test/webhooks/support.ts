/**
 * A real HTTP receiver for webhook tests (node:http on a free port) whose answers are
 * scripted: each request takes the next behaviour, the last one repeats.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour = number | 'hang';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered (hang: nothing). */
  answered: Behaviour;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Replaces the script: the following requests take these behaviours. */
  script(...behaviours: Behaviour[]): void;
  /** Requests being handled right now, by webhook-id (the concurrency witness). */
  maxConcurrentPerId(): number;
  close(): Promise<void>;
}

export async function startReceiver(initial: Behaviour[] = [200], path = '/hooks'): Promise<Receiver> {
  let script = [...initial];
  const received: Received[] = [];
  const inFlight = new Map<string, number>();
  let maxPerId = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const behaviour = (script.length > 1 ? script.shift() : script[0]) ?? 200;
      const id = String(req.headers['webhook-id']);
      const n = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, n);
      maxPerId = Math.max(maxPerId, n);
      const done = () => inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: behaviour,
      });
      if (behaviour === 'hang') {
        res.on('close', done);
        return;
      }
      // A little work time, so overlapping sends of one delivery would be seen overlapping.
      setTimeout(() => {
        done();
        res.writeHead(behaviour, { 'content-type': 'text/plain' }).end(`answer ${behaviour}`);
      }, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    script: (...b) => {
      script = b;
    },
    maxConcurrentPerId: () => maxPerId,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls until `check` returns a value (not undefined/false); fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An order in REST shape, as the outbox publishes it (the data of OrderPlaced). */
export const orderData = (n: number) => ({
  order_id: `ord_${n.toString(16).padStart(32, '0')}`,
  status: 'APPROVED',
  allocated_budget: '1234.50',
  processed_at: 1_767_225_600.5,
});
