/**
 * What the profiling tools share: the compiled embedded system started the way the quote bench
 * starts it (fresh data directory, the bench promotion added), one of the quote loads, and a
 * process's CPU time from /proc.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceProcess, startProcess } from '../../harness/processes.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { TOOLS_RULE, UPSERT_PROMOTION } from '../../harness/tools-promotion.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { QUOTE_REQUESTS } from '../scenarios/quote.ts';

/** CPU seconds (user + system) a process has used: /proc/<pid>/stat fields 14 and 15. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `node` flags from PROFILE_NODE_FLAGS (space-separated), added to a tool's own. */
export const extraNodeFlags = (): string[] =>
  process.env.PROFILE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];

/** One of the quote bench's loads by name (`graphql`, `rest`). */
export function quoteRequest(which: string): HttpRequestSpec {
  const request = QUOTE_REQUESTS[which as keyof typeof QUOTE_REQUESTS];
  if (!request) throw new Error(`unknown load ${which}: ${Object.keys(QUOTE_REQUESTS).join(', ')}`);
  return request();
}

/** The compiled embedded system with `nodeArgs`, on a fresh data directory, the bench promotion added. */
export async function startQuoteSystem(nodeArgs: string[], prefix = 'ac-prof-'): Promise<ServiceProcess> {
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), prefix)), CATALOG_SIZE: '10000', LOG_LEVEL: 'info' };
  const sys = await startProcess('embedded', env, 120_000, { compiled: true, nodeArgs });
  const token = await mintDevToken(testConfig(env), { subject: 'bench', roles: ['promotions:admin'] });
  const added = await gql(sys.url, UPSERT_PROMOTION, { token, variables: { rule: TOOLS_RULE } });
  if (added.errors) throw new Error(JSON.stringify(added.errors));
  return sys;
}
