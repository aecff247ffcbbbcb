/**
 * Benchmark harness: scenarios are HTTP loads (bench/loadgen.ts against a server started by the
 * scenario) or in-process functions (timed calls). Every figure is reported beside a baseline
 * measured in the same run, because absolute numbers move with the machine.
 */
import type { RequestSpec } from '../harness/requests.ts';
import { load } from './loadgen.ts';

/** One request of a load (harness/requests.ts: the hot paths' requests, shared with tests). */
export type HttpRequestSpec = RequestSpec;

export interface HttpTarget {
  url: string;
  /** One request, or several cycled through (autocannon `requests`). */
  requests: HttpRequestSpec[];
  close(): Promise<void>;
  /** Optional check after the run (e.g. the share of non-2xx answers it expects). */
  expectStatus?: number;
}

export interface HttpScenario {
  kind: 'http';
  group: string;
  name: string;
  /** The row this one is compared with (same group), e.g. `bare Fastify route`. */
  baseline?: string;
  setup(): Promise<HttpTarget>;
  connections?: number;
  seconds?: number;
}

export interface FnScenario {
  kind: 'fn';
  group: string;
  name: string;
  baseline?: string;
  /** Returns the function to time; called `iterations` times after a warm-up. */
  setup(): Promise<{ run(): unknown | Promise<unknown>; close?(): Promise<void> }>;
  iterations?: number;
}

export type Scenario = HttpScenario | FnScenario;

export interface Row {
  group: string;
  name: string;
  baseline?: string;
  /** Requests (or calls) per second. */
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx?: number;
  errors?: number;
}

export async function runHttp(s: HttpScenario, quick: boolean): Promise<Row> {
  const target = await s.setup();
  try {
    const opts = { url: target.url, connections: s.connections ?? 10, requests: target.requests };
    await load({ ...opts, seconds: quick ? 1 : 3 }); // warm-up: JIT, caches, query plans
    const r = await load({ ...opts, seconds: quick ? 2 : (s.seconds ?? 10) });
    return {
      group: s.group,
      name: s.name,
      ...(s.baseline ? { baseline: s.baseline } : {}),
      rps: r.rps,
      p50: r.p50,
      p99: r.p99,
      mean: r.mean,
      non2xx: r.non2xx,
      errors: r.errors,
    };
  } finally {
    await target.close();
  }
}

export async function runFn(s: FnScenario, quick: boolean): Promise<Row> {
  const { run, close } = await s.setup();
  try {
    const n = quick ? Math.ceil((s.iterations ?? 10_000) / 10) : (s.iterations ?? 10_000);
    for (let i = 0; i < Math.min(n, 1000); i++) await run();
    const samples = new Float64Array(n);
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await run();
      samples[i] = performance.now() - t;
    }
    const total = performance.now() - start;
    samples.sort();
    const at = (q: number) => samples[Math.min(n - 1, Math.floor(q * n))] ?? 0;
    return {
      group: s.group,
      name: s.name,
      ...(s.baseline ? { baseline: s.baseline } : {}),
      rps: (n / total) * 1000,
      p50: at(0.5),
      p99: at(0.99),
      mean: total / n,
    };
  } finally {
    await close?.();
  }
}
