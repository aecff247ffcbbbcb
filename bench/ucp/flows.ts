/**
 * UCP checkout flows as a load (the UCP group of `npm run bench`, ./run.ts): create → update
 * (shipping selected) → complete on account, as docs/ucp.md walks through, each request with its
 * own Idempotency-Key, from a worker thread, paced as the ACP flows are (../acp/flows.ts: closed
 * loop, or open loop with the create's latency from its due time and the update's and the
 * complete's from when the previous answer made them due).
 *
 * With `ap2`, the platform's profile negotiates `dev.ucp.shopping.ap2_mandate`: every checkout
 * comes back signed (`ap2.merchant_authorization`), and each completion carries a checkout
 * mandate made as a platform makes it when its user confirms (./mandate.ts, in a thread of its
 * own) over the checkout the update returned. The completion is due when its mandate is made:
 * the mandate's cost is the platform's, not in the completion's latency; the time from the
 * update's answer to the completion's (mandate included) is reported apart (`confirmToComplete`).
 */
// First: a generator's process restarts with one collector thread before it loads anything else.
import '../single-threaded-gc.ts';
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { UCP_ADDRESS } from '../../harness/ucp-platform.ts';
import {
  type FlowResult,
  figures,
  histogram,
  inWorker,
  OPS,
  type Op,
  type OpFigures,
  pace,
} from '../acp/flows.ts';
import { type Ap2Platform, mandateMaker } from './mandate.ts';

export interface UcpFlowOptions {
  url: string;
  key: string;
  /** The platform profile UCP-Agent names (with or without ap2_mandate among its capabilities). */
  profileUrl: string;
  /** AP2 negotiated: the platform that makes the mandates (./mandate.ts). */
  ap2?: Ap2Platform;
  /**
   * Without AP2, the platform's work of AP2 all the same: a mandate made over each checkout the
   * update returned, and not sent (the completion carries the purchase order alone). The load
   * generator shares the server's cores, so this holds its work equal between the two kinds.
   */
  platformWork?: Ap2Platform;
  seconds: number;
  warmupSeconds?: number;
  /** Closed loop: flows at a time. */
  concurrency?: number;
  /** Open loop: flows started per second. */
  rate?: number;
}

export interface UcpFlowResult extends FlowResult {
  /** Failed requests by operation, status and UCP code (or the checkout's status for a 200). */
  failures: Record<string, number>;
  /** With AP2: the time the generator took to make each mandate (not in any latency). */
  mandate?: OpFigures;
  /**
   * With AP2: from the update's answer to the completion's, the mandate's making included: what
   * a user waits between confirming and the order, so a maker slowed by its priority shows.
   */
  confirmToComplete?: OpFigures;
  /**
   * The timing loop's event-loop delay, p99 in ms: what the generator itself may add to the
   * latencies it times (the mandates are made in another thread), for either kind.
   */
  generatorDelayP99: number;
}

// Apparel and books, two lines in one shipping group: no promotion with a cap per customer
// applies (../acp/flows.ts says why that matters), and the update makes it ready to complete.
const LINES = [
  { item: { id: 'SKU-APP-000003' }, quantity: 2 },
  { item: { id: 'SKU-BOK-000002' }, quantity: 1 },
];
const CREATE = JSON.stringify({
  line_items: LINES,
  fulfillment: { methods: [{ type: 'shipping', destinations: [UCP_ADDRESS] }] },
});
const UPDATE = JSON.stringify({
  line_items: LINES,
  fulfillment: {
    methods: [
      {
        line_item_ids: ['li_0', 'li_1'],
        groups: [{ id: 'group_1', selected_option_id: 'procurement_delivery' }],
      },
    ],
  },
});
const PAYMENT = {
  instruments: [
    {
      id: 'po_1',
      handler_id: 'purchase_order',
      type: 'purchase_order',
      selected: true,
      credential: { type: 'purchase_order', purchase_order_number: 'PO-BENCH' },
    },
  ],
};
const COMPLETE = JSON.stringify({ payment: PAYMENT });

/** Each load's own Idempotency-Key prefix (../acp/flows.ts: keys must not repeat across loads). */
const RUN = randomUUID();

type Checkout = Record<string, unknown> & { id: string; status: string };
type Histogram = ReturnType<typeof histogram>;

/** Each operation's latencies and failures, counted by what failed. */
function tally() {
  const hist = { create: histogram(), update: histogram(), complete: histogram() };
  const failed = { create: 0, update: 0, complete: 0 };
  const failures: Record<string, number> = {};
  const fail = (op: Op, what: string) => {
    failed[op]++;
    failures[`${op} ${what}`] = (failures[`${op} ${what}`] ?? 0) + 1;
  };
  const ops = () =>
    Object.fromEntries(
      OPS.map((op) => [op, figures(hist[op], hist[op].totalCount, failed[op])]),
    ) as FlowResult['ops'];
  return { hist, failures, fail, ops };
}

const requestHeaders = (o: UcpFlowOptions) => ({
  authorization: `Bearer ${o.key}`,
  'ucp-agent': `profile="${o.profileUrl}"`,
  'content-type': 'application/json',
});

/**
 * The completion's body with AP2: the mandate the user's confirmation makes, before the
 * completion is due; its making is timed in `making`, not in the completion's latency.
 */
async function mandated(
  u: Checkout,
  make: (checkout: Checkout) => Promise<string>,
  making: Histogram | undefined,
): Promise<string> {
  const made = performance.now();
  const body = JSON.stringify({ payment: PAYMENT, ap2: { checkout_mandate: await make(u) } });
  making?.recordValue(Math.max(1, Math.round((performance.now() - made) * 1000)));
  return body;
}

async function drive(o: UcpFlowOptions): Promise<UcpFlowResult> {
  const pool = new Pool(o.url, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const { hist, failures, fail, ops } = tally();
  const making = histogram();
  const confirmed = histogram();
  const maker = o.ap2 ?? o.platformWork;
  const platform = maker ? mandateMaker(maker) : undefined;
  await platform?.ready;
  const mandate = o.ap2 ? platform?.make : undefined;
  const unsent = o.ap2 ? undefined : platform?.make;
  const headers = requestHeaders(o);
  let n = 0;
  let flows = 0;
  const start = performance.now() + 20;
  const measuredFrom = start + (o.warmupSeconds ?? 0) * 1000;
  const end = measuredFrom + o.seconds * 1000;

  const send = async (
    op: Op,
    method: 'POST' | 'PUT',
    path: string,
    body: string,
    due: number,
    m: boolean,
  ) => {
    const res = await pool.request({
      method,
      path,
      headers: { ...headers, 'idempotency-key': `bench-ucp-${RUN}-${++n}` },
      body,
    });
    const text = await res.body.text();
    const ok = res.statusCode === (op === 'create' ? 201 : 200);
    if (m) hist[op].recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)));
    const json = JSON.parse(text) as Checkout & { code?: string };
    if (!ok && m) fail(op, `${res.statusCode} ${json.code}`);
    return ok ? json : undefined;
  };

  const flow = async (due: number) => {
    const m = due >= measuredFrom;
    try {
      const c = await send('create', 'POST', '/ucp/checkout-sessions', CREATE, due, m);
      if (!c) return;
      const path = `/ucp/checkout-sessions/${c.id}`;
      const u = await send('update', 'PUT', path, UPDATE, performance.now(), m);
      if (!u) return;
      if (u.status !== 'ready_for_complete') {
        if (m) fail('update', `200 ${u.status}`);
        return;
      }
      // AP2 negotiated: the checkout the mandate holds must carry the business's signature.
      if (mandate && !(u.ap2 as { merchant_authorization?: string } | undefined)?.merchant_authorization) {
        if (m) fail('update', '200 without ap2.merchant_authorization');
        return;
      }
      const answered = performance.now();
      if (unsent) await mandated(u, unsent, m ? making : undefined);
      const body = mandate ? await mandated(u, mandate, m ? making : undefined) : COMPLETE;
      const done = await send('complete', 'POST', `${path}/complete`, body, performance.now(), m);
      if (platform && m)
        confirmed.recordValue(Math.max(1, Math.round((performance.now() - answered) * 1000)));
      if (done?.status === 'completed') {
        if (m) flows++;
      } else if (done && m) fail('complete', `200 ${done.status}`);
    } catch (err) {
      if (m) fail('create', `thrown ${err instanceof Error ? err.message.slice(0, 60) : 'error'}`);
    }
  };

  const delay = monitorEventLoopDelay({ resolution: 5 });
  setTimeout(() => delay.enable(), Math.max(0, measuredFrom - performance.now()));
  await pace(o, start, end, flow);
  delay.disable();
  await pool.destroy();
  await platform?.close();
  const elapsed = (Math.min(performance.now(), end + 30_000) - measuredFrom) / 1000;
  return {
    flowsPerSecond: flows / Math.max(o.seconds, o.concurrency ? o.seconds : elapsed),
    ops: ops(),
    failures,
    generatorDelayP99: delay.count ? delay.percentile(99) / 1e6 : 0,
    ...(platform
      ? {
          mandate: figures(making, making.totalCount, 0),
          confirmToComplete: figures(confirmed, confirmed.totalCount, 0),
        }
      : {}),
  };
}

/** Runs the UCP flows in a worker thread and resolves with their figures. */
export function runUcpFlows(opts: UcpFlowOptions): Promise<UcpFlowResult> {
  return inWorker<UcpFlowResult>({ mode: 'ucp-flows', opts }, import.meta.url);
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const job = workerData as { mode: string; opts: UcpFlowOptions };
  if (job.mode === 'ucp-flows') void drive(job.opts).then((r) => port.postMessage(r));
}
