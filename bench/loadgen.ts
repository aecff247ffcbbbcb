/**
 * Closed-loop HTTP load generator with microsecond latency resolution, run in a worker thread
 * so the load does not share an event loop with the server under test.
 *
 * Written here rather than using autocannon's numbers: autocannon records latencies in whole
 * milliseconds, and several targets of this project are sub-millisecond (a 0.1 ms gateway
 * overhead, a 1 ms promotion p99). undici's Pool gives keep-alive connections and
 * hdr-histogram-js the percentiles; this file only drives them.
 */
// First: a generator's process restarts with one collector thread before it loads anything else.
import './single-threaded-gc.ts';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';
import type { HttpRequestSpec } from './harness.ts';

export interface LoadOptions {
  url: string;
  requests: HttpRequestSpec[];
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  /** Latencies in milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  max: number;
  non2xx: number;
  errors: number;
  statuses: Record<number, number>;
}

async function drive(opts: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(opts.url, { connections: opts.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const hist = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
  const statuses: Record<number, number> = {};
  let done = 0;
  let errors = 0;
  let non2xx = 0;
  const started = performance.now();
  const until = started + opts.seconds * 1000;
  // One position for all connections: each request of the list is sent once per pass (a list
  // of requests with their own Idempotency-Keys must not send one key on two connections).
  let next = 0;
  const loop = async () => {
    while (performance.now() < until) {
      const r = opts.requests[next++ % opts.requests.length] as HttpRequestSpec;
      const t = performance.now();
      try {
        const res = await pool.request({
          method: r.method ?? 'GET',
          path: r.path,
          headers: r.headers ?? {},
          ...(r.body !== undefined ? { body: r.body } : {}),
        });
        await res.body.dump();
        hist.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        done++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, () => loop()));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  const us = (v: number) => v / 1000;
  return {
    requests: done,
    rps: done / elapsed,
    p50: us(hist.getValueAtPercentile(50)),
    p99: us(hist.getValueAtPercentile(99)),
    mean: us(hist.mean),
    max: us(hist.maxValue),
    non2xx,
    errors,
    statuses,
  };
}

/** Runs the load in a worker thread and resolves with its figures. */
export function load(opts: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    // Workers do not inherit tsx's loader: the bootstrap registers it, then loads this file.
    const bootstrap = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
    const worker = new Worker(bootstrap, { eval: true, workerData: opts });
    worker.once('message', (m: LoadResult) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`load worker exited ${code}`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  void drive(workerData as LoadOptions).then((r) => port.postMessage(r));
}
