/**
 * ACP checkout flows as a load: each flow creates a session, updates it and completes it paid by
 * purchase order (three requests, each with its own Idempotency-Key), in a worker thread so the
 * load never shares the event loop it measures. Closed loop (N flows at a time, each starting
 * when the last ended) gives the maximum; open loop starts flows at a constant rate and counts
 * the create's latency from its due time (no coordinated omission), the update's and the
 * complete's from when the previous answer made them due. Optional background: /v2 orders at a
 * constant rate beside the flows, measured apart.
 *
 * A flow has three dependent requests and fresh ids, which neither ../loadgen.ts nor
 * ../open-loop/generator.ts (fixed request lists) can send; their pool and histograms are the
 * same kind.
 */
// First: a generator's process restarts with one collector thread before it loads anything else.
import '../single-threaded-gc.ts';
import { randomUUID } from 'node:crypto';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';
import type { HttpRequestSpec } from '../harness.ts';

export type Op = 'create' | 'update' | 'complete';
export const OPS: readonly Op[] = ['create', 'update', 'complete'];

export interface FlowOptions {
  url: string;
  key: string;
  seconds: number;
  warmupSeconds?: number;
  /** Closed loop: flows at a time. */
  concurrency?: number;
  /** Open loop: flows started per second. */
  rate?: number;
  /** Open loop: requests beside the flows (e.g. /v2 orders), at this rate. */
  background?: { requests: HttpRequestSpec[]; rate: number };
  /** Keep each measured request's due time (Unix ms), latency (ms) and operation (OPS index). */
  samples?: boolean;
}

export interface OpFigures {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  mean: number;
  failed: number;
}

/**
 * Closed loop of one operation alone, `concurrency` at a time: creates (their session ids come
 * back), updates of the given sessions (cycled), or completions of the given sessions (each
 * once; the run ends early when they run out).
 */
export interface OpOptions {
  url: string;
  key: string;
  op: Op;
  seconds: number;
  concurrency: number;
  ids?: string[];
}

export interface OpResult extends OpFigures {
  perSecond: number;
  ids: string[];
  /** Failed requests by status and ACP code (or the session's status for a 200). */
  failures: Record<string, number>;
}

export interface FlowResult {
  /** Completed flows per second of the measured time. */
  flowsPerSecond: number;
  ops: Record<Op, OpFigures>;
  background?: OpFigures & { achieved: number };
  /** With `samples`: triples of due time (Unix ms), latency (ms), OPS index. */
  samples?: number[];
}

const HEADERS = (key: string) => ({
  authorization: `Bearer ${key}`,
  'api-version': '2026-04-17',
  'content-type': 'application/json',
});
// Apparel and books: no promotion with a cap per customer applies (the bench promotion of
// harness/tools-promotion.ts takes 3 items with a tool, the seeded PROMO-ELEC-3FOR2 3 items with
// an electronics item, one redemption per customer each), and every session here is one key's
// agent. With such a cart the sessions made before the first completion all carried the
// discount and every completion after the first was refused (the cap was reached since the
// quote: re-priced, not ordered), so "complete" measured that refusal, not a purchase.
const CREATE = JSON.stringify({
  currency: 'usd',
  capabilities: {},
  line_items: [
    { id: 'SKU-APP-000003', quantity: 2 },
    { id: 'SKU-BOK-000002', quantity: 1 },
  ],
});
const UPDATE = JSON.stringify({
  line_items: [
    { id: 'SKU-APP-000003', quantity: 2 },
    { id: 'SKU-BOK-000002', quantity: 2 },
  ],
});
const COMPLETE = JSON.stringify({
  payment_data: { purchase_order_number: 'PO-BENCH', payment_terms: 'net_30' },
});

/**
 * Each load's own prefix of Idempotency-Keys. A create's key is scoped by the key's identity and
 * the path alone, so keys that repeat across loads of one run (a counter from 1 in each worker)
 * replayed the earlier load's sessions instead of creating new ones.
 */
const RUN = randomUUID();

export const histogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });

/** A histogram of µs as an operation's figures in ms. */
export const figures = (h: hdr.Histogram, count: number, bad: number): OpFigures => ({
  count,
  p50: h.getValueAtPercentile(50) / 1000,
  p99: h.getValueAtPercentile(99) / 1000,
  p999: h.getValueAtPercentile(99.9) / 1000,
  mean: h.mean / 1000,
  failed: bad,
});

async function drive(o: FlowOptions): Promise<FlowResult> {
  const pool = new Pool(o.url, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const hist = { create: histogram(), update: histogram(), complete: histogram() };
  const failed = { create: 0, update: 0, complete: 0 };
  const headers = HEADERS(o.key);
  let n = 0;
  let flows = 0;
  const samples: number[] | undefined = o.samples ? [] : undefined;
  const start = performance.now() + 20;
  const measuredFrom = start + (o.warmupSeconds ?? 0) * 1000;
  const end = measuredFrom + o.seconds * 1000;

  const send = async (op: Op, path: string, body: string, due: number, measured: boolean) => {
    const res = await pool.request({
      method: 'POST',
      path,
      headers: { ...headers, 'idempotency-key': `bench-${RUN}-${++n}` },
      body,
    });
    const text = await res.body.text();
    const ok = res.statusCode === (op === 'create' ? 201 : 200);
    if (measured) {
      const ms = performance.now() - due;
      hist[op].recordValue(Math.max(1, Math.round(ms * 1000)));
      samples?.push(performance.timeOrigin + due, ms, OPS.indexOf(op));
      if (!ok) failed[op]++;
    }
    return ok ? (JSON.parse(text) as { id: string; status: string }) : undefined;
  };

  const flow = async (due: number) => {
    const measured = due >= measuredFrom;
    try {
      const s = await send('create', '/acp/checkout_sessions', CREATE, due, measured);
      if (!s) return;
      const u = await send('update', `/acp/checkout_sessions/${s.id}`, UPDATE, performance.now(), measured);
      if (!u) return;
      const c = await send(
        'complete',
        `/acp/checkout_sessions/${s.id}/complete`,
        COMPLETE,
        performance.now(),
        measured,
      );
      if (c?.status === 'completed' && measured) flows++;
      else if (c && measured) failed.complete++;
    } catch {
      if (measured) failed.create++;
    }
  };

  const bg = o.background ? { hist: histogram(), completed: 0, failed: 0, next: 0 } : undefined;
  const fireBackground = async (due: number) => {
    if (!o.background || !bg) return;
    const r = o.background.requests[bg.next++ % o.background.requests.length] as HttpRequestSpec;
    const measured = due >= measuredFrom;
    try {
      const res = await pool.request({
        method: r.method ?? 'GET',
        path: r.path,
        headers: r.headers ?? {},
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      await res.body.dump();
      if (!measured) return;
      bg.hist.recordValue(Math.max(1, Math.round((performance.now() - due) * 1000)));
      bg.completed++;
      if (res.statusCode < 200 || res.statusCode >= 300) bg.failed++;
    } catch {
      if (measured) bg.failed++;
    }
  };

  await pace(
    o,
    start,
    end,
    flow,
    o.background ? { rate: o.background.rate, fire: fireBackground } : undefined,
  );
  await pool.destroy();
  const elapsed = (Math.min(performance.now(), end + 30_000) - measuredFrom) / 1000;
  return {
    flowsPerSecond: flows / Math.max(o.seconds, o.concurrency ? o.seconds : elapsed),
    ops: {
      create: figures(hist.create, hist.create.totalCount, failed.create),
      update: figures(hist.update, hist.update.totalCount, failed.update),
      complete: figures(hist.complete, hist.complete.totalCount, failed.complete),
    },
    ...(bg
      ? { background: { ...figures(bg.hist, bg.completed, bg.failed), achieved: bg.completed / o.seconds } }
      : {}),
    ...(samples ? { samples } : {}),
  };
}

/**
 * Runs `flow` from `start` to `end` (performance.now() ms): closed loop, `o.concurrency` at a
 * time, each starting when the last ended; or open loop, `o.rate` per second, each given its due
 * time (and `beside`, at its own rate, in the same ticks). Resolves when every one started has
 * ended, or 30 s after `end`. Shared by the ACP flows here and the UCP flows (../ucp/flows.ts).
 */
export async function pace(
  o: { concurrency?: number; rate?: number },
  start: number,
  end: number,
  flow: (due: number) => Promise<void>,
  beside?: { rate: number; fire: (due: number) => Promise<void> },
): Promise<void> {
  const inflight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };
  if (o.concurrency) {
    await new Promise((r) => setTimeout(r, Math.max(0, start - performance.now())));
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (performance.now() < end) await flow(performance.now());
      }),
    );
  } else {
    const period = 1000 / (o.rate ?? 1);
    const bg = beside ? { next: 0, period: 1000 / beside.rate } : undefined;
    let next = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        for (let due = start + next * period; due <= now && due < end; due = start + next * period) {
          next++;
          track(flow(due));
        }
        let wake = start + next * period;
        if (beside && bg) {
          for (
            let due = start + bg.next * bg.period;
            due <= now && due < end;
            due = start + bg.next * bg.period
          ) {
            track(beside.fire(due));
            bg.next++;
          }
          wake = Math.min(wake, start + bg.next * bg.period);
        }
        if (now >= end) resolve();
        else setTimeout(tick, Math.max(0, Math.min(wake, end) - performance.now()));
      };
      setTimeout(tick, Math.max(0, start - performance.now()));
    });
  }
  await Promise.race([Promise.all(inflight), new Promise((r) => setTimeout(r, 30_000))]);
}

async function driveOp(o: OpOptions): Promise<OpResult> {
  const pool = new Pool(o.url, { connections: o.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = HEADERS(o.key);
  const hist = histogram();
  const ids: string[] = [];
  let n = 0;
  let failed = 0;
  const failures: Record<string, number> = {};
  const failure = (what: string) => {
    failed++;
    failures[what] = (failures[what] ?? 0) + 1;
  };
  let done = 0;
  let cursor = 0;
  const started = performance.now();
  const until = started + o.seconds * 1000;
  const request = (id: string | undefined) => {
    if (o.op === 'create') return { path: '/acp/checkout_sessions', body: CREATE, ok: 201 };
    if (o.op === 'update') return { path: `/acp/checkout_sessions/${id}`, body: UPDATE, ok: 200 };
    return { path: `/acp/checkout_sessions/${id}/complete`, body: COMPLETE, ok: 200 };
  };
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (performance.now() < until) {
        let id: string | undefined;
        if (o.op !== 'create') {
          if (o.op === 'complete' && cursor >= (o.ids?.length ?? 0)) return;
          id = o.ids?.[cursor++ % (o.ids?.length ?? 1)];
        }
        const r = request(id);
        const t = performance.now();
        const res = await pool.request({
          method: 'POST',
          path: r.path,
          headers: { ...headers, 'idempotency-key': `bench-op-${RUN}-${++n}` },
          body: r.body,
        });
        const text = await res.body.text();
        hist.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        done++;
        if (res.statusCode !== r.ok)
          failure(`${res.statusCode} ${(JSON.parse(text) as { code?: string }).code}`);
        else if (o.op === 'create') ids.push((JSON.parse(text) as { id: string }).id);
        // A completion answered 200 with the session not completed (re-priced, refused) bought nothing.
        else if (o.op === 'complete') {
          const status = (JSON.parse(text) as { status?: string }).status;
          if (status !== 'completed') failure(`200 ${status}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.destroy();
  return {
    perSecond: done / elapsed,
    count: done,
    p50: hist.getValueAtPercentile(50) / 1000,
    p99: hist.getValueAtPercentile(99) / 1000,
    p999: hist.getValueAtPercentile(99.9) / 1000,
    mean: hist.mean / 1000,
    failed,
    failures,
    ids,
  };
}

/** Runs one operation's closed loop in a worker thread. */
export function runOp(opts: OpOptions): Promise<OpResult> {
  return inWorker<OpResult>({ mode: 'op', opts });
}

/** Runs the flows in a worker thread and resolves with their figures. */
export function runFlows(opts: FlowOptions): Promise<FlowResult> {
  return inWorker<FlowResult>({ mode: 'flows', opts });
}

type Job = { mode: 'flows'; opts: FlowOptions } | { mode: 'op'; opts: OpOptions };

/** Runs `job` in a worker thread that loads `module` (this file, or another generator's that imports it). */
export function inWorker<T>(job: unknown, module = import.meta.url): Promise<T> {
  return new Promise((resolve, reject) => {
    const bootstrap = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(module)}, ${JSON.stringify(module)}))`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: job,
      resourceLimits: { maxYoungGenerationSizeMb: 96 },
    });
    worker.once('message', (m: T) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`load worker exited ${code}`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const job = workerData as Job;
  // Another generator's worker (../ucp/flows.ts) loads this file too: its jobs are its own.
  if (job.mode === 'op' || job.mode === 'flows')
    void (job.mode === 'op' ? driveOp(job.opts) : drive(job.opts)).then((r) => port.postMessage(r));
}
