/**
 * One ACP checkout operation alone, closed loop (run in ./flows.ts's worker thread by `runOp`).
 */
import { Pool } from 'undici';
import { COMPLETE, CREATE, HEADERS, histogram, type Op, type OpFigures, RUN, UPDATE } from './requests.ts';

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

export async function driveOp(o: OpOptions): Promise<OpResult> {
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
