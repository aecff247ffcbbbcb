/**
 * An acknowledged order is on disk (docs/deployment.md, "What survives what"): the embedded
 * store syncs its WAL before an order's 201, and a power cut after any number of 201s loses
 * none of them.
 *
 * One embedded system per mode runs under strace (every sync and every socket read and write,
 * in order) with sync-shadow (test/support/power-loss: what each sync made durable). After the
 * orders it is killed, the disk it would have left behind is built, and the system is started
 * on that disk. EMBEDDED_DB_FSYNC=off is the control: the same run must show no sync before the
 * 201s and lose acknowledged orders, or the checks below could not fail.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endWithThisProcess } from '../../harness/process-group.ts';
import { startFlags, startProcess, untilListening } from '../../harness/processes.ts';
import { TEST_STORE_ENV } from '../../harness/services.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { buildSyncShadow, materialise, syncShadowEnv } from '../support/power-loss/power-loss.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';
/** The agent's token bucket out of the way: the test counts orders, not refusals. */
const UNLIMITED = { RATE_LIMIT_CAPACITY: '100000', RATE_LIMIT_REFILL_PER_SECOND: '10000' };
const WORKERS = 6;
const ORDERS_EACH = 6;

type Run = { acked: string[]; trace: string; disk: string };

/** Starts the compiled embedded system under strace and sync-shadow, places orders, cuts the power. */
async function runUntilPowerCut(library: string, fsync: 'on' | 'off'): Promise<Run> {
  const data = mkdtempSync(join(tmpdir(), 'ac-power-data-'));
  const shadow = mkdtempSync(join(tmpdir(), 'ac-power-shadow-'));
  const trace = join(mkdtempSync(join(tmpdir(), 'ac-power-trace-')), 'strace.txt');
  const preload = Object.entries(syncShadowEnv(library, data, shadow)).flatMap(([k, v]) => [
    '-E',
    `${k}=${v}`,
  ]);
  const child: ChildProcess = spawn(
    'strace',
    [
      ...['-f', '--seccomp-bpf', '-y', '-s', '48', '-o', trace],
      ...['-e', 'trace=read,write,writev,fsync,fdatasync', '-e', 'signal=none'],
      ...preload,
      process.execPath,
      ...startFlags('embedded'),
      join(root, 'dist/gateway/main.js'),
    ],
    {
      cwd: root,
      // Its own process group: the power cut kills strace and the system at once.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        ...TEST_STORE_ENV,
        APOLLO_TELEMETRY_DISABLED: '1',
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
        PORT: '0',
        WARM_UP_MS: '0',
        // Every order must be answered 201: strace slows the loop past the shedding's budgets.
        SHED_QUOTE_BUDGET_MS: '0',
        SHED_ORDER_BUDGET_MS: '0',
        DATA_DIR: data,
        // The tests' catalog (harness/system.ts): seeding the default 10,000 under strace cost
        // seconds of CPU and is no part of what this test proves.
        CATALOG_SIZE: '500',
        EMBEDDED_DB_FSYNC: fsync,
        ...UNLIMITED,
      },
    },
  );
  endWithThisProcess(child);
  const sys = await untilListening(
    `embedded (fsync ${fsync})`,
    child,
    120_000,
    (out) => /"msg":"listening on (http[^"]+)"/.exec(out)?.[1],
  );
  const acked: string[] = [];
  try {
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        for (let i = 0; i < ORDERS_EACH; i++) {
          const res = await fetch(`${sys.url}/api/v2/procurement/orders`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-spiffe-id': AGENT },
            body: JSON.stringify({
              agent_id: `agent-power-${w}0`,
              sku: 'SKU-TOL-000001',
              quantity: 1,
              max_budget_usd: 500,
            }),
          });
          expect(res.status).toBe(201);
          acked.push(((await res.json()) as { order_id: string }).order_id);
        }
      }),
    );
  } finally {
    // The power cut: nothing gets to run after the last 201.
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
    await new Promise((r) =>
      child.exitCode === null && child.signalCode === null ? child.once('exit', r) : r(0),
    );
  }
  const disk = mkdtempSync(join(tmpdir(), 'ac-power-disk-'));
  materialise(shadow, disk);
  return { acked, trace: readFileSync(trace, 'utf8'), disk };
}

/**
 * For each 201 an order got: whether a sync of a WAL file completed between the request's
 * arrival (its read returned) and the response's first byte (its write began), by socket, in the
 * order strace saw them. A call another thread interrupted is split by strace into
 * `name(args <unfinished ...>` and `<... name resumed>rest`: reads and syncs count where they
 * returned, writes where they began.
 */
function syncedBeforeEach201(trace: string): boolean[] {
  const waiting = new Map<string, boolean>();
  const unfinished = new Map<string, string>();
  const outcomes: boolean[] = [];
  const see = (call: string, line: string) => {
    const sync = /^(fsync|fdatasync)\(\d+<([^>]*)>/.exec(call);
    if (sync) {
      if ((sync[2] ?? '').includes('/pg_wal/') && / = 0$/.test(line))
        for (const s of waiting.keys()) waiting.set(s, true);
      return;
    }
    const socket = /^\w+\((\d+)<socket:\[\d+\]>/.exec(call)?.[1];
    if (!socket) return;
    if (call.startsWith('read(') && line.includes('POST /api/v2/procurement/orders'))
      waiting.set(socket, false);
    else if (/^writev?\(/.test(call) && line.includes('HTTP/1.1 201')) {
      outcomes.push(waiting.get(socket) === true);
      waiting.delete(socket);
    }
  };
  for (const line of trace.split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pid = '', call = ''] = m;
    const cut = call.indexOf(' <unfinished ...>');
    if (cut >= 0) {
      const begun = call.slice(0, cut);
      if (begun.startsWith('write')) see(begun, begun);
      else unfinished.set(pid, begun);
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(call);
    if (resumed) {
      const begun = unfinished.get(pid);
      unfinished.delete(pid);
      if (begun) see(begun, `${begun}${resumed[2] ?? ''}`);
      continue;
    }
    see(call, call);
  }
  return outcomes;
}

let library: string;
const started: { stop(): Promise<unknown> }[] = [];
beforeAll(() => {
  library = buildSyncShadow();
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe('the embedded store on disk (EMBEDDED_DB_FSYNC=on, the default)', () => {
  let run: Run;
  beforeAll(async () => {
    run = await runUntilPowerCut(library, 'on');
  }, 180_000);

  it('syncs a WAL file between each order request and its 201', () => {
    const outcomes = syncedBeforeEach201(run.trace);
    expect(outcomes).toHaveLength(WORKERS * ORDERS_EACH);
    expect(outcomes.filter((synced) => !synced)).toEqual([]);
  });

  it('leaves an audit chain that verifies after the power cut', () => {
    // Entries are written after their responses (the spec's audit): the last ones may be gone,
    // and what is there must verify, its signed head included.
    const out = execFileSync(process.execPath, [join(root, 'dist/scripts/audit-verify.js')], {
      cwd: root,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: run.disk,
        EMBEDDED_DB_THREAD: 'main',
        LOG_LEVEL: 'silent',
      },
    });
    expect(out).toMatch(/^audit log intact: \d+ entries/);
  });

  it('has every acknowledged order after the power cut, read through the restarted system', async () => {
    const sys = await startProcess(
      'embedded',
      { DATA_DIR: run.disk, CATALOG_SIZE: '500', ...UNLIMITED },
      120_000,
    );
    started.push(sys);
    const missing: string[] = [];
    for (const id of run.acked) {
      const res = await fetch(`${sys.url}/api/v2/procurement/orders/${id}`, {
        headers: { 'x-spiffe-id': AGENT },
      });
      if (res.status !== 200 || ((await res.json()) as { order_id?: string }).order_id !== id)
        missing.push(id);
    }
    expect(run.acked).toHaveLength(WORKERS * ORDERS_EACH);
    expect(missing).toEqual([]);
  }, 150_000);
});

describe('the control: EMBEDDED_DB_FSYNC=off (PostgreSQL fsync=off, PGlite as shipped)', () => {
  let run: Run;
  beforeAll(async () => {
    run = await runUntilPowerCut(library, 'off');
  }, 180_000);

  it('syncs nothing before the 201s', () => {
    const outcomes = syncedBeforeEach201(run.trace);
    expect(outcomes).toHaveLength(WORKERS * ORDERS_EACH);
    expect(outcomes.filter((synced) => synced)).toEqual([]);
  });

  it('loses acknowledged orders to the power cut', async () => {
    let present = 0;
    try {
      const db = await openPglite(run.disk, { sync: 'off' });
      try {
        const rows = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM purchase_orders WHERE order_id = ANY($1)',
          [run.acked],
        );
        present = rows[0]?.n ?? 0;
      } finally {
        await db.close();
      }
    } catch {
      // A store that does not open, or has no orders table, holds none of them.
    }
    expect(present).toBeLessThan(run.acked.length);
  }, 60_000);
});
