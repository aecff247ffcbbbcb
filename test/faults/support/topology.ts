/**
 * The distributed topology for fault tests: the procurement process and gateway processes as
 * separate OS processes (harness/processes.ts), each killed at exit even when a test
 * failed before its cleanup. Order reads go to the store directly, to compare what clients
 * were told with what exists.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type ENTRY, type ServiceProcess, startProcess } from '../../../harness/processes.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../../../harness/services.ts';

const started = new Set<ServiceProcess>();
const dataDirs = new Set<string>();
process.once('exit', () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

export async function start(entry: keyof typeof ENTRY, env: Record<string, string>): Promise<ServiceProcess> {
  const p = await startProcess(entry, env, 90_000);
  started.add(p);
  return p;
}

/** Environment shared by the processes of one topology. */
export function topologyEnv(databaseUrl: string, label: string): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), `ac-faults-${label}-`));
  dataDirs.add(dataDir);
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(label),
    DATA_DIR: dataDir,
    GATEWAY_SHARED_SECRET: 'fault-suite-secret-0123456789abcdef',
    // The faults are the subject, not the rate limit.
    RATE_LIMIT_CAPACITY: '100000',
    RATE_LIMIT_REFILL_PER_SECOND: '100000',
    ORDER_DOMAIN_TIMEOUT_MS: '1500',
  };
}

export const gatewayEnv = (env: Record<string, string>, procurementUrl: string) => ({
  ...env,
  TOPOLOGY: 'distributed',
  PROCUREMENT_URL: procurementUrl,
});

export const portOf = (url: string): string => new URL(url).port;

/** Stored orders by id with how many rows each has (a primary key makes >1 impossible; counted anyway). */
export async function storedOrders(
  databaseUrl: string,
): Promise<Map<string, { rows: number; budget: string }>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query<{ order_id: string; n: string; budget: string }>(
      'SELECT order_id, count(*) AS n, min(allocated_budget)::text AS budget FROM purchase_orders GROUP BY order_id',
    );
    return new Map(r.rows.map((row) => [row.order_id, { rows: Number(row.n), budget: row.budget }]));
  } finally {
    await c.end();
  }
}

/** Stops the processes (SIGTERM, then SIGKILL) and removes the topologies' data directories. */
export async function stopAll(...ps: (ServiceProcess | undefined)[]): Promise<void> {
  await Promise.all(
    ps.map(async (p) => {
      if (!p) return;
      await p.stop();
      started.delete(p);
    }),
  );
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  dataDirs.clear();
}
