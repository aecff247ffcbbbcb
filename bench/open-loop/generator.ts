/**
 * Open-loop (constant arrival rate) HTTP load, in a worker thread so it never shares the event
 * loop it measures. Request i of a stream is due at start + i / rate, whatever happened before
 * it; its latency is counted from that due time to the end of its response, so time a request
 * spent waiting for the client (a late timer, all connections busy) is counted too: no
 * coordinated omission (the closed-loop generator in ../loadgen.ts waits for each answer before
 * it sends the next request, so a stall there hides the requests that would have queued behind
 * it).
 *
 * Written here rather than taken from a tool: autocannon and undici's benchmarks are closed
 * loop, and wrk2 (the reference open-loop generator) is not packaged for this machine. undici's
 * Pool opens connections on demand (bounded) and hdr-histogram-js gives the percentiles.
 */
// First: a generator's process restarts with one collector thread before it loads anything else.
import '../single-threaded-gc.ts';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';
import type { HttpRequestSpec } from '../harness.ts';
import { startConnTrace } from './conn-trace.ts';

export interface Stream {
  requests: HttpRequestSpec[];
  /** Arrivals per second. */
  rate: number;
  /**
   * Where this stream's requests go, in turn (several replicas: the load spread over them);
   * by default the run's `url`. The control beside orders sends its primary to the bare route
   * and its orders to the system.
   */
  urls?: string[];
}

export interface OpenLoadOptions {
  url: string;
  /** The measured stream. */
  primary: Stream;
  /** Load beside it (e.g. 100 agent orders/s), measured separately. */
  background?: Stream;
  seconds: number;
  /** Upper bound on open connections; a request finding none free waits (and that wait counts). */
  maxConnections?: number;
  /** Also return each request's due time and latency, per stream (bench/tools/stall-trace.ts, warm-start.ts). */
  samples?: boolean;
  /**
   * Seconds of the same arrivals before the measured ones, sent and answered but not counted:
   * the generator's own start (its thread compiling, its pool opening connections) stalled the
   * first second of every step by up to 2 s on a 2-core machine, alone and mixed alike, and
   * that is no server's latency. Load generators ramp up for the same reason (wrk2's
   * calibration, k6's warm-up stages). The server is warmed by the closed loop before.
   */
  warmupSeconds?: number;
  /**
   * A start as a user meets it (bench/tools/warm-start.ts): until `readyUrl` answers 200 (polled
   * every 5 ms; several: until each has answered 200 once), the streams run against `warmupUrl`
   * (a bare route), so this generator's own start is over; from the first ready answer,
   * `seconds` of them are measured against `url`, every request counted.
   */
  untilReady?: { readyUrl: string | string[]; warmupUrl: string };
}

export interface StreamResult {
  offered: number;
  /** Completed responses per second of the run. */
  achieved: number;
  sent: number;
  completed: number;
  /** Latencies from each request's due time, in milliseconds. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  non2xx: number;
  errors: number;
  /**
   * Answered 503 (shed at once for a queue-time budget, issue 48; or unavailable). They are in
   * the figures above; `accepted` has the latencies of the others only.
   */
  shed: number;
  accepted: { p50: number; p99: number; max: number; completed: number };
  /**
   * With `samples`: due time (Unix ms, this clock's) and latency (ms), pair after pair, of the
   * requests not answered 503; `shedAt` the due times of those answered 503.
   */
  samples?: number[];
  shedAt?: number[];
}

export interface OpenLoadResult {
  /** When the measured requests began (Unix ms): with `untilReady`, the first ready answer. */
  measuredFrom: number;
  primary: StreamResult;
  background?: StreamResult;
  /** CONN_TRACE=1: per 100 ms window after `measuredFrom`, connections opened and where the slowest request waited. */
  trace?: string[];
}

const histogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
  });

async function drive(opts: OpenLoadOptions): Promise<OpenLoadResult> {
  const poolOf = (url: string) =>
    new Pool(url, { connections: opts.maxConnections ?? 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const pools = new Map<string, Pool>();
  const pooled = (url: string) => pools.get(url) ?? (pools.set(url, poolOf(url)).get(url) as Pool);
  const streams = [opts.primary, ...(opts.background ? [opts.background] : [])].map((s) => ({
    ...s,
    targets: (s.urls ?? [opts.url]).map(pooled),
    samples: opts.samples ? ([] as number[]) : undefined,
    shedAt: opts.samples ? ([] as number[]) : undefined,
    period: 1000 / s.rate,
    next: 0,
    fired: 0,
    hist: histogram(),
    accepted: histogram(),
    shed: 0,
    sent: 0,
    completed: 0,
    non2xx: 0,
    errors: 0,
  }));
  const inflight = new Set<Promise<void>>();
  const trace = process.env.CONN_TRACE === '1' ? startConnTrace() : undefined;

  /** `to`: a pool for every stream (the bare route before ready), or each stream's targets in turn. */
  const fire = (s: (typeof streams)[number], due: number, to: Pool | undefined, measured: boolean) => {
    const n = s.fired++;
    const r = s.requests[n % s.requests.length] as HttpRequestSpec;
    const target = to ?? (s.targets[n % s.targets.length] as Pool);
    if (measured) s.sent++;
    const p = target
      .request({
        method: r.method ?? 'GET',
        path: r.path,
        headers: trace ? { ...r.headers, 'x-bench-due': String(due) } : (r.headers ?? {}),
        ...(r.body !== undefined ? { body: r.body } : {}),
      })
      .then(async (res) => {
        await res.body.dump();
        if (!measured) return;
        const ms = performance.now() - due;
        s.hist.recordValue(Math.max(1, Math.round(ms * 1000)));
        if (res.statusCode === 503) {
          s.shed++;
          s.shedAt?.push(performance.timeOrigin + due);
        } else {
          s.accepted.recordValue(Math.max(1, Math.round(ms * 1000)));
          s.samples?.push(performance.timeOrigin + due, ms);
        }
        s.completed++;
        if (res.statusCode < 200 || res.statusCode >= 300) s.non2xx++;
      })
      .catch(() => {
        if (measured) s.errors++;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  };

  /** Fires every stream at its rate from `start` until `end` (or until `stop()` is true). */
  const run = (
    start: number,
    end: number,
    target: (due: number) => [Pool | undefined, boolean],
    stop = () => false,
  ) =>
    new Promise<void>((resolve) => {
      for (const s of streams) s.next = 0;
      const tick = () => {
        const now = performance.now();
        let next = end;
        for (const s of streams) {
          // Everything due by now goes out now, each keeping its own due time.
          for (
            let due = start + s.next * s.period;
            due <= now && due < end;
            due = start + s.next * s.period
          ) {
            s.next++;
            const [to, measured] = target(due);
            fire(s, due, to, measured);
          }
          next = Math.min(next, start + s.next * s.period);
        }
        if (now >= end || stop()) resolve();
        else setTimeout(tick, Math.max(0, next - performance.now()));
      };
      setTimeout(tick, Math.max(0, start - performance.now()));
    });

  let measuredFrom: number;
  if (opts.untilReady) {
    const bare = poolOf(opts.untilReady.warmupUrl);
    const readyUrls = [opts.untilReady.readyUrl].flat().map((u) => new URL(u));
    let isReady = false;
    const poll = async (ready: URL) => {
      const probe = poolOf(ready.origin);
      for (;;) {
        const res = await probe.request({ method: 'GET', path: ready.pathname }).catch(() => undefined);
        await res?.body.dump();
        if (res?.statusCode === 200) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      await probe.destroy();
    };
    const polling = Promise.all(readyUrls.map(poll)).then(() => {
      isReady = true;
    });
    await run(
      performance.now() + 20,
      Number.POSITIVE_INFINITY,
      () => [bare, false],
      () => isReady,
    );
    await polling;
    measuredFrom = performance.now();
    const end = measuredFrom + opts.seconds * 1000;
    await run(measuredFrom, end, () => [undefined, true]);
    await Promise.race([Promise.all(inflight), new Promise((r) => setTimeout(r, 30_000))]);
    await bare.destroy();
  } else {
    const start = performance.now() + 20;
    measuredFrom = start + (opts.warmupSeconds ?? 0) * 1000;
    const from = measuredFrom;
    await run(start, from + opts.seconds * 1000, (due) => [undefined, due >= from]);
    // Answers still under way count (their latency keeps growing from their due time), up to a bound.
    await Promise.race([Promise.all(inflight), new Promise((r) => setTimeout(r, 30_000))]);
  }
  await Promise.all([...pools.values()].map((p) => p.destroy()));

  const elapsed = (performance.now() - measuredFrom) / 1000;
  const result = (s: (typeof streams)[number]): StreamResult => {
    const ms = (q: number) => s.hist.getValueAtPercentile(q) / 1000;
    return {
      offered: s.rate,
      achieved: s.completed / Math.max(elapsed, opts.seconds),
      sent: s.sent,
      completed: s.completed,
      p50: ms(50),
      p99: ms(99),
      p999: ms(99.9),
      max: s.hist.maxValue / 1000,
      mean: s.hist.mean / 1000,
      non2xx: s.non2xx,
      errors: s.errors + (s.sent - s.completed - s.errors),
      shed: s.shed,
      accepted: {
        p50: s.accepted.getValueAtPercentile(50) / 1000,
        p99: s.accepted.getValueAtPercentile(99) / 1000,
        max: s.accepted.maxValue / 1000,
        completed: s.completed - s.shed,
      },
      ...(s.samples ? { samples: s.samples, shedAt: s.shedAt } : {}),
    };
  };
  const [primary, background] = streams;
  return {
    measuredFrom: performance.timeOrigin + measuredFrom,
    primary: result(primary as (typeof streams)[number]),
    ...(background ? { background: result(background) } : {}),
    ...(trace ? { trace: trace.summary(measuredFrom) } : {}),
  };
}

/** Runs the open-loop load in a worker thread and resolves with its figures. */
export function openLoad(opts: OpenLoadOptions): Promise<OpenLoadResult> {
  return new Promise((resolve, reject) => {
    // Workers do not inherit tsx's loader: the bootstrap registers it, then loads this file.
    const bootstrap = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: opts,
      resourceLimits: { maxYoungGenerationSizeMb: 96 },
    });
    worker.once('message', (m: OpenLoadResult) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`open-loop worker exited ${code}`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  void drive(workerData as OpenLoadOptions).then((r) => port.postMessage(r));
}
