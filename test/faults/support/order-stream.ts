/**
 * The fault suite's load generator: clients that place orders with Idempotency-Keys the way a
 * careful agent does, and record every response. On a 503, a 409 (the same key still in
 * flight), a 429 or a network error the client retries the same key (after Retry-After, capped
 * so a test stays short); any other answer ends that order. Every attempt is recorded, so a
 * test can prove what each client was told and compare it with what was stored.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

export interface Attempt {
  readonly key: string;
  readonly client: number;
  /** Epoch ms when the answer (or the error) arrived. */
  readonly at: number;
  /** HTTP status, or 0 for a network error or a client-side timeout. */
  readonly status: number;
  readonly retryAfter?: string;
  readonly orderId?: string;
  readonly allocatedBudget?: string;
  readonly error?: string;
}

export interface OrderOutcome {
  readonly key: string;
  readonly client: number;
  readonly spiffeId: string;
  readonly budget: string;
  /** The order id of the 201 the client finally got; undefined when it gave up. */
  orderId?: string;
  attempts: number;
}

export interface StreamOptions {
  /** Gateway base URLs; a client sends attempt n to urls[n % urls.length] (a retry may change replica). */
  readonly urls: () => readonly string[];
  readonly clients: number;
  /** New orders stop being started when this resolves. */
  readonly until: Promise<unknown>;
  /** Unacknowledged orders are retried until then (epoch ms, from when `until` resolved). */
  readonly drainMs: number;
  /** Pause between one client's orders. */
  readonly pauseMs?: number;
  /** Cap on the wait a Retry-After asks for. */
  readonly maxRetryWaitMs?: number;
  readonly requestTimeoutMs?: number;
}

export interface StreamResult {
  readonly attempts: readonly Attempt[];
  readonly orders: readonly OrderOutcome[];
}

const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
const RETRY = new Set([0, 409, 429, 503]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function orderStream(o: StreamOptions): Promise<StreamResult> {
  const attempts: Attempt[] = [];
  const orders: OrderOutcome[] = [];
  const dispatcher = new Agent({
    connections: 4,
    headersTimeout: o.requestTimeoutMs ?? 5000,
    bodyTimeout: o.requestTimeoutMs ?? 5000,
  });
  let stopping = false;
  let deadline = Number.POSITIVE_INFINITY;
  void o.until.then(() => {
    stopping = true;
    deadline = Date.now() + o.drainMs;
  });

  async function place(order: OrderOutcome, client: number): Promise<void> {
    const body = `{"agent_id":"fault-agent-${String(client).padStart(3, '0')}","sku":"SKU-FLT-000001","quantity":1,"max_budget_usd":${order.budget}}`;
    for (let n = 0; Date.now() < deadline; n++) {
      const urls = o.urls();
      const url = urls[(client + n) % urls.length] as string;
      order.attempts++;
      let status = 0;
      let retryAfter: string | undefined;
      try {
        const res = await request(`${url}/v2/orders`, {
          method: 'POST',
          dispatcher,
          headers: {
            'content-type': 'application/json',
            'x-spiffe-id': order.spiffeId,
            'idempotency-key': order.key,
            'x-trace-id': `${order.key}-${n}`,
          },
          body,
        });
        const text = await res.body.text();
        status = res.statusCode;
        const ra = res.headers['retry-after'];
        retryAfter = typeof ra === 'string' ? ra : undefined;
        const json = status === 201 ? (JSON.parse(text) as { order_id: string }) : undefined;
        const allocated = status === 201 ? /"allocated_budget":([^,}]+)/.exec(text)?.[1] : undefined;
        attempts.push({
          key: order.key,
          client,
          at: Date.now(),
          status,
          ...(retryAfter === undefined ? {} : { retryAfter }),
          ...(json ? { orderId: json.order_id } : {}),
          ...(allocated ? { allocatedBudget: allocated } : {}),
        });
        if (json) {
          order.orderId = json.order_id;
          return;
        }
      } catch (err) {
        attempts.push({ key: order.key, client, at: Date.now(), status: 0, error: (err as Error).message });
      }
      if (!RETRY.has(status)) return;
      const asked = retryAfter === undefined ? 100 : Number(retryAfter) * 1000;
      await sleep(Math.min(Number.isFinite(asked) ? asked : 100, o.maxRetryWaitMs ?? 250));
    }
  }

  async function client(i: number): Promise<void> {
    const spiffeId = `${AGENT}/fault-client-${i}-${randomUUID().slice(0, 6)}`;
    for (let n = 0; !stopping; n++) {
      // Whole cents, different per order: the stored amount is checked against the one sent.
      const cents = 100 + ((i * 7919 + n * 104_729) % 499_800);
      const order: OrderOutcome = {
        key: `fault-${i}-${n}-${randomUUID().slice(0, 8)}`,
        client: i,
        spiffeId,
        budget: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
        attempts: 0,
      };
      orders.push(order);
      await place(order, i);
      if (o.pauseMs) await sleep(o.pauseMs);
    }
  }

  try {
    await Promise.all(Array.from({ length: o.clients }, (_, i) => client(i)));
  } finally {
    await dispatcher.close();
  }
  return { attempts, orders };
}

/** The figures docs/reliability.md reports for one run. */
export function figures(r: StreamResult, stored: ReadonlyMap<string, number>) {
  const acknowledged = r.orders.filter((o) => o.orderId !== undefined);
  const byStatus: Record<string, number> = {};
  for (const a of r.attempts) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  return {
    ordersSent: r.orders.length,
    attempts: r.attempts.length,
    acknowledged: acknowledged.length,
    stored: [...stored.values()].reduce((n, c) => n + c, 0),
    duplicated: [...stored.values()].filter((c) => c > 1).length,
    acknowledgedNotStored: acknowledged.filter((o) => !stored.has(o.orderId as string)).length,
    byStatus,
  };
}
