/**
 * ACP flows as a load: each checkout flow creates a session, updates it and completes it paid by
 * purchase order (three requests, each with its own Idempotency-Key); each cart flow (`kind:
 * 'cart'`) creates an ACP cart and replaces its items (`POST /acp/carts`, `PUT /acp/carts/{id}`)
 * with the same lines, so the two are priced alike (issue 49: cart create/update against the
 * session's). In a worker thread so the load never shares the event loop it measures. Closed
 * loop (N flows at a time, each starting when the last ended) gives the maximum; open loop
 * starts flows at a constant rate and counts the create's latency from its due time (no
 * coordinated omission), the update's and the complete's from when the previous answer made
 * them due. Optional background: /v2 orders at a constant rate beside the flows, measured apart.
 *
 * A flow has dependent requests and fresh ids, which neither ../loadgen.ts nor
 * ../open-loop/generator.ts (fixed request lists) can send; their pool and histograms are the
 * same kind.
 */
// First: a generator's process restarts with one collector thread before it loads anything else.
import '../single-threaded-gc.ts';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { HttpRequestSpec } from '../harness.ts';
import { driveOp, type OpOptions, type OpResult } from './ops.ts';
import {
  CART_CREATE,
  CART_UPDATE,
  COMPLETE,
  CREATE,
  figures,
  HEADERS,
  histogram,
  OPS,
  type Op,
  type OpFigures,
  RUN,
  UPDATE,
} from './requests.ts';

export type { OpOptions, OpResult } from './ops.ts';
// The operations' names and figures, for the callers of runFlows and runOp.
export { figures, histogram, OPS, type Op, type OpFigures } from './requests.ts';

export interface FlowOptions {
  url: string;
  key: string;
  seconds: number;
  warmupSeconds?: number;
  /** Checkout sessions (create → update → complete, the default) or carts (create → update). */
  kind?: 'session' | 'cart';
  /** Closed loop: flows at a time. */
  concurrency?: number;
  /** Open loop: flows started per second. */
  rate?: number;
  /** Open loop: requests beside the flows (e.g. /v2 orders), at this rate. */
  background?: { requests: HttpRequestSpec[]; rate: number };
  /** Keep each measured request's due time (Unix ms), latency (ms) and operation (OPS index). */
  samples?: boolean;
}

export interface FlowResult {
  /** Completed flows per second of the measured time (a cart flow: its update answered 200). */
  flowsPerSecond: number;
  /** A cart flow's `complete` has no request (count 0). */
  ops: Record<Op, OpFigures>;
  background?: OpFigures & { achieved: number };
  /** With `samples`: triples of due time (Unix ms), latency (ms), OPS index. */
  samples?: number[];
}

interface Route {
  method: 'POST' | 'PUT';
  path(id: string): string;
  body: string;
  /** The status of a success. */
  ok: number;
}

/** Each operation's method, path, body and success status, by kind (a cart has no completion). */
const ROUTES: Record<'session' | 'cart', Partial<Record<Op, Route>>> = {
  session: {
    create: { method: 'POST', path: () => '/acp/checkout_sessions', body: CREATE, ok: 201 },
    update: { method: 'POST', path: (id: string) => `/acp/checkout_sessions/${id}`, body: UPDATE, ok: 200 },
    complete: {
      method: 'POST',
      path: (id: string) => `/acp/checkout_sessions/${id}/complete`,
      body: COMPLETE,
      ok: 200,
    },
  },
  cart: {
    create: { method: 'POST', path: () => '/acp/carts', body: CART_CREATE, ok: 201 },
    update: { method: 'PUT', path: (id: string) => `/acp/carts/${id}`, body: CART_UPDATE, ok: 200 },
  },
};

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

  const routes = ROUTES[o.kind ?? 'session'];
  const send = async (op: Op, id: string, due: number, measured: boolean) => {
    const r = routes[op];
    if (!r) throw new Error(`a ${o.kind} flow has no ${op}`);
    const res = await pool.request({
      method: r.method,
      path: r.path(id),
      headers: { ...headers, 'idempotency-key': `bench-${RUN}-${++n}` },
      body: r.body,
    });
    const text = await res.body.text();
    const ok = res.statusCode === r.ok;
    if (measured) {
      const ms = performance.now() - due;
      hist[op].recordValue(Math.max(1, Math.round(ms * 1000)));
      samples?.push(performance.timeOrigin + due, ms, OPS.indexOf(op));
      if (!ok) failed[op]++;
    }
    return ok ? (JSON.parse(text) as { id: string; status?: string }) : undefined;
  };

  const flow = async (due: number) => {
    const measured = due >= measuredFrom;
    try {
      const s = await send('create', '', due, measured);
      if (!s) return;
      const u = await send('update', s.id, performance.now(), measured);
      if (!u) return;
      if (o.kind === 'cart') {
        if (measured) flows++;
        return;
      }
      const c = await send('complete', s.id, performance.now(), measured);
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
