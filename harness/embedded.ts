/**
 * The embedded system as `npm start` runs it (compiled, its start script's flags), in its own
 * process, with the bench promotion added: what the benchmarks load and the tests that guard
 * the hot paths measure (test/runtime/hidden-classes.test.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { type ServiceProcess, startProcess } from './processes.ts';
import { QUOTE_CATALOG_SIZE } from './requests.ts';
import { gql, testConfig } from './system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from './tools-promotion.ts';

export async function startEmbeddedSystem(
  node?: string,
  nodeArgs: string[] = [],
  extraEnv: Record<string, string> = {},
  cwd?: string,
  /** Another checkout whose dist/ is started (StartProcessOptions.tree). */
  tree?: string,
): Promise<ServiceProcess> {
  const env = {
    ...extraEnv,
    DATA_DIR: extraEnv.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'ac-embedded-')),
    // The quote requests' catalog unless the caller needs less (harness/requests.ts, HOT_PATH_CATALOG_SIZE).
    CATALOG_SIZE: extraEnv.CATALOG_SIZE ?? String(QUOTE_CATALOG_SIZE),
    // The bucket is large so a load measures the checks, not the limit (bench/scenarios/orders.ts).
    RATE_LIMIT_CAPACITY: '1000000000',
    RATE_LIMIT_REFILL_PER_SECOND: '1000000',
  };
  const sys = await startProcess('embedded', env, 120_000, {
    compiled: true,
    // What the benchmarks load and the hidden-classes test measures: V8 as in production.
    productionJit: true,
    nodeArgs,
    ...(node ? { node } : {}),
    ...(cwd ? { cwd } : {}),
    ...(tree ? { tree } : {}),
  });
  const token = await mintDevToken(testConfig(env), { subject: 'bench', roles: ['promotions:admin'] });
  // A system started with the shedding on may answer 503 while its start still busies the loop
  // (issue 48): retried as a client honouring Retry-After would, a little sooner.
  let res = await gql(sys.url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
  for (let i = 0; i < 50 && res.errors?.[0]?.extensions?.code === 'SERVICE_UNAVAILABLE'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    res = await gql(sys.url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
  }
  if (res.errors) throw new Error(`could not add the bench promotion: ${JSON.stringify(res.errors)}`);
  return sys;
}
