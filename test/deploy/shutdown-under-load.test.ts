/**
 * SIGTERM under load, as Kubernetes sends it on a rolling update: readiness turns false first
 * while the process still serves (SHUTDOWN_DELAY_MS), then in-flight requests finish, buffered
 * audit entries are written and the process exits 0. No accepted order is lost (every 201 is in
 * the store, audited) and no order exists whose caller was not told (every stored order got its
 * 201).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres } from '../../harness/services.ts';
import { freshAgent, post } from '../procurement/support/agent.ts';

const DELAY_MS = 800;
const WORKERS = 12;

let store: Awaited<ReturnType<typeof freshPostgres>>;
let proc: ServiceProcess;

beforeAll(async () => {
  store = await freshPostgres('shutdown');
  proc = await startProcess(
    'gateway',
    {
      DATABASE_URL: store.url,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-shutdown-load-')),
      CATALOG_SIZE: '200',
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      RATE_LIMIT_CAPACITY: '1000000',
      RATE_LIMIT_REFILL_PER_SECOND: '1000000',
    },
    90_000,
  );
}, 120_000);

afterAll(async () => {
  await proc?.kill();
  await store?.drop();
});

interface Outcome {
  trace: string;
  status: number | 'refused';
  at: number;
  orderId?: string;
}

describe('SIGTERM under load', () => {
  it('turns readiness false first, finishes in-flight orders, flushes the audit and loses no order', async () => {
    const outcomes: Outcome[] = [];
    let exited = false;
    let n = 0;
    const worker = async (w: number) => {
      const spiffe = freshAgent(`shutdown-${w}`);
      while (!exited) {
        const trace = `shutdown-${w}-${++n}`;
        try {
          const r = await post(proc.url, { spiffe, headers: { 'x-trace-id': trace } });
          outcomes.push({ trace, status: r.status, at: Date.now(), orderId: r.json.order_id as string });
        } catch {
          // Connection refused or closed once the listener is gone: not an answer.
          outcomes.push({ trace, status: 'refused', at: Date.now() });
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const exitCode = new Promise<number | null>((resolve) =>
      proc.child.once('exit', (code) => {
        exited = true;
        resolve(code);
      }),
    );
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    await new Promise((r) => setTimeout(r, 800));
    const sigterm = Date.now();
    proc.child.kill('SIGTERM');
    // Within the delay: not ready, still alive and still serving.
    await new Promise((r) => setTimeout(r, 150));
    const ready = await fetch(`${proc.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { lifecycle: 'draining' } });
    expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);

    expect(await exitCode).toBe(0);
    await load;
    expect(proc.output()).toContain('shutting down');

    const accepted = outcomes.filter((o) => o.status === 201);
    expect(outcomes.filter((o) => o.at < sigterm && o.status === 201).length).toBeGreaterThan(WORKERS);
    // Orders were still accepted after SIGTERM, during the delay.
    expect(accepted.filter((o) => o.at > sigterm + 100).length).toBeGreaterThan(0);
    // Every answer was a 201, or a 503 from the closing server; nothing else.
    for (const o of outcomes) expect([201, 503, 'refused']).toContain(o.status);

    const c = new pg.Client({ connectionString: store.url });
    await c.connect();
    try {
      const traces = outcomes.map((o) => o.trace);
      const stored = await c.query<{ order_id: string }>(
        'SELECT order_id FROM purchase_orders WHERE trace_id = ANY($1)',
        [traces],
      );
      expect(stored.rows.map((r) => r.order_id).sort()).toEqual(accepted.map((o) => o.orderId).sort());
      const audited = await c.query<{ trace_id: string }>(
        'SELECT trace_id FROM agent_audit_log WHERE status = 201 AND trace_id = ANY($1)',
        [traces],
      );
      expect(audited.rows.map((r) => r.trace_id).sort()).toEqual(accepted.map((o) => o.trace).sort());
    } finally {
      await c.end();
    }
  }, 60_000);
});
