/**
 * The distributed topology for benchmarks: the three subgraphs as real processes sharing one
 * Redis prefix and one Postgres schema, as an operator would run them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';

export interface SubgraphProcesses {
  env: Record<string, string>;
  urls: { pricing: string; promotions: string; procurement: string };
  processes: { pricing: ServiceProcess; promotions: ServiceProcess; procurement: ServiceProcess };
  close(): Promise<void>;
}

export async function startSubgraphProcesses(
  extra: Record<string, string> = {},
  /** Extra node flags for each subgraph process by name, e.g. `--cpu-prof`. */
  nodeArgs: (name: 'pricing' | 'promotions' | 'procurement') => string[] = () => [],
): Promise<SubgraphProcesses> {
  const pg = await freshPostgres('bench');
  const env = {
    DATABASE_URL: pg.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix('bench'),
    GATEWAY_SHARED_SECRET: 'bench-secret-bench-secret',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-bench-')),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  // Pricing first: it creates and seeds the catalog that the others may read.
  // Compiled, as `npm run start:<name>` runs them.
  const opts = (name: 'pricing' | 'promotions' | 'procurement') => ({
    compiled: true,
    nodeArgs: nodeArgs(name),
  });
  const pricing = await startProcess('pricing', { ...env, LOG_LEVEL: 'info' }, 120_000, opts('pricing'));
  const [promotions, procurement] = await Promise.all([
    startProcess('promotions', { ...env, LOG_LEVEL: 'info' }, 120_000, opts('promotions')),
    startProcess('procurement', { ...env, LOG_LEVEL: 'info' }, 120_000, opts('procurement')),
  ]);
  const procs: ServiceProcess[] = [pricing, promotions, procurement];
  return {
    env,
    urls: { pricing: pricing.url, promotions: promotions.url, procurement: procurement.url },
    processes: { pricing, promotions, procurement },
    async close() {
      await Promise.all(procs.map((p) => p.stop()));
      await pg.drop();
    },
  };
}
