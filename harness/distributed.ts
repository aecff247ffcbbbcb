/**
 * The distributed topology as an operator runs it, for tests: pricing, promotions and
 * procurement each in its own process, and any number of gateway replicas in front, sharing the
 * machine's Redis and a fresh PostgreSQL schema (docs/deployment.md). `token` mints a caller
 * token the gateways accept (the development key under the shared DATA_DIR).
 *
 * `procurementOnly`: the order domain's layout, procurement replicas (the gateways call the
 * first) and gateways without pricing or promotions: what the order, webhook and MCP files use,
 * two processes fewer to start (2–5 s of CPU each).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { loadConfig } from '../lib/config.ts';
import { type ServiceProcess, startProcess } from './processes.ts';
import { freshPostgres, TEST_REDIS_URL, uniquePrefix } from './services.ts';
import { type GqlResult, gql } from './system.ts';

export interface DistributedSystem {
  /** The gateway replicas' base URLs. */
  readonly gateways: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly processes: readonly ServiceProcess[];
  /** The procurement process the gateways call (PROCUREMENT_URL), e.g. for a test to kill. */
  readonly procurement: ServiceProcess;
  /**
   * Starts more gateway replicas on the same services and env (without `gatewayEnv`, with
   * `env`), stopped by `close`: for suites that need other gateway settings beside the others.
   */
  addGateways(n: number, env?: Record<string, string>): Promise<string[]>;
  token(roles: string[], subject?: string): Promise<string>;
  gql(query: string, opts?: { token?: string; variables?: Record<string, unknown> }): Promise<GqlResult>;
  close(): Promise<void>;
}

export interface DistributedOptions {
  gateways?: number;
  env?: Record<string, string>;
  /** Settings for the `gateways` alone, not for those of `addGateways` (e.g. a rate limit). */
  gatewayEnv?: Record<string, string>;
  label?: string;
  /** Procurement replicas only (this many), no pricing or promotions. */
  procurementOnly?: number;
}

export async function startDistributed(o: DistributedOptions = {}): Promise<DistributedSystem> {
  const label = o.label ?? 'dist';
  const pg = await freshPostgres(label);
  const dataDir = mkdtempSync(join(tmpdir(), `ac-${label}-`));
  const env: Record<string, string> = {
    DATABASE_URL: pg.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(label),
    GATEWAY_SHARED_SECRET: 'distributed-test-secret-0123456789',
    DATA_DIR: dataDir,
    CATALOG_SIZE: '500',
    ...o.env,
  };
  // In start order (pricing, promotions, procurement, gateways): tests name them by index.
  const processes: ServiceProcess[] = [];
  const start = async (entry: Parameters<typeof startProcess>[0], e: Record<string, string>, n: number) => {
    const started = await Promise.all(Array.from({ length: n }, () => startProcess(entry, e, 90_000)));
    processes.push(...started);
    return started;
  };
  try {
    let gw: Record<string, string>;
    let procurement: ServiceProcess;
    if (o.procurementOnly) {
      procurement = (await start('procurement', env, o.procurementOnly))[0] as ServiceProcess;
      gw = { ...env, TOPOLOGY: 'distributed', PROCUREMENT_URL: procurement.url };
    } else {
      const pricing = await startProcess('pricing', env, 90_000);
      processes.push(pricing);
      const [promotions, p] = await Promise.all([
        startProcess('promotions', env, 90_000),
        startProcess('procurement', env, 90_000),
      ]);
      processes.push(promotions, p);
      procurement = p;
      gw = {
        ...env,
        TOPOLOGY: 'distributed',
        PRICING_URL: pricing.url,
        PROMOTIONS_URL: promotions.url,
        PROCUREMENT_URL: procurement.url,
      };
    }
    const gateways = await start('gateway', { ...gw, ...o.gatewayEnv }, o.gateways ?? 2);
    const config = loadConfig({ DATA_DIR: dataDir });
    return {
      gateways: gateways.map((g) => g.url),
      env,
      processes,
      procurement,
      addGateways: async (n, extra = {}) =>
        (await start('gateway', { ...gw, ...extra }, n)).map((g) => g.url),
      token: (roles, subject = 'test-user') => mintDevToken(config, { subject, roles }),
      gql: (query, opts = {}) => gql(gateways[0]?.url ?? '', query, opts),
      async close() {
        await Promise.all(processes.map((p) => p.stop()));
        await pg.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(processes.map((p) => p.stop()));
    await pg.drop();
    throw err;
  }
}

/**
 * One topology for the suites of one test file, started when the first of them asks for it:
 * `get` starts it once, `close` stops it if it was started (the file's afterAll).
 */
export function sharedDistributed(o: DistributedOptions = {}): {
  get(): Promise<DistributedSystem>;
  close(): Promise<void>;
} {
  let started: Promise<DistributedSystem> | undefined;
  return {
    get: () => (started ??= startDistributed(o)),
    close: async () => (await started)?.close(),
  };
}
