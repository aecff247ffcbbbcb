import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { callerVerifierFor } from '../lib/auth/jwt.ts';
import type { Clock } from '../lib/clock.ts';
import type { Config } from '../lib/config.ts';
import type { Db } from '../lib/db/index.ts';
import type { SubgraphModule, SubgraphName } from '../lib/graphql/subgraph.ts';
import { createHttpApp } from '../lib/http/app.ts';
import { readyWhenWarm } from '../lib/http/warm-up.ts';
import { createPlatform, type Platform } from '../lib/platform.ts';
import type { AgentGatewayState } from './agent/index.ts';
import { registerConsole } from './console/index.ts';
import { InProcessDataSource } from './datasources/in-process.ts';
import { perCallerCheck, perCallerFieldNames } from './datasources/merge.ts';
import { RemoteSubgraphDataSource } from './datasources/remote.ts';
import { registerEdgeRoutes } from './edge/index.ts';
import { withQuoteFallback } from './edge/quote/graphql-fallback.ts';
import { approvalAuditPlugin } from './graphql/approval-audit.ts';
import { mountGateway, supergraphSdl } from './graphql.ts';
import { edgeShedRoute } from './shed-routes.ts';
import { subgraphFactories } from './subgraphs.ts';
import { warmUp } from './warm-up.ts';

export interface RunningSystem {
  readonly app: FastifyInstance;
  readonly platform: Platform;
  readonly local: Partial<Record<SubgraphName, SubgraphModule>>;
  /** Base URL once listening. */
  url: string;
  listen(port?: number): Promise<string>;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  db?: Db;
}

const NAMES = Object.keys(subgraphFactories) as SubgraphName[];

function running(app: FastifyInstance, platform: Platform, local: RunningSystem['local']): RunningSystem {
  const sys: RunningSystem = {
    app,
    platform,
    local,
    url: '',
    async listen(port = platform.config.PORT) {
      // Not ready until warm (gateway/warm-up.ts); /healthz answers meanwhile.
      readyWhenWarm(app, platform, (budgetMs) => warmUp(app, platform, { budgetMs }));
      await app.listen({ port, host: platform.config.HOST });
      const addr = app.server.address() as AddressInfo;
      const scheme = platform.config.TLS_CERT_FILE && platform.config.TLS_KEY_FILE ? 'https' : 'http';
      sys.url = `${scheme}://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
      return sys.url;
    },
    async close() {
      await app.close();
      for (const m of Object.values(local)) await m.close?.();
      await platform.close();
    },
  };
  return sys;
}

/** Operators' approval decisions in the agent audit log, with the order's id (gateway/graphql/approval-audit.ts). */
const approvalAudit = (platform: Platform, agent: AgentGatewayState) =>
  approvalAuditPlugin({
    audit: agent.audit,
    orders: agent.chain.orders,
    clock: platform.clock,
    log: platform.log,
  });

/**
 * Embedded topology: one process, every subgraph in it, the gateway calling them in process,
 * every REST path on one base URL, in-memory state unless REDIS_URL/DATABASE_URL are set.
 */
export async function buildEmbedded(config: Config, opts: StartOptions = {}): Promise<RunningSystem> {
  const platform = await createPlatform(config, { service: 'embedded', ...opts });
  const local: Partial<Record<SubgraphName, SubgraphModule>> = {};
  for (const name of NAMES) local[name] = await subgraphFactories[name](platform);
  const app = createHttpApp(platform, { shed: edgeShedRoute });
  for (const m of Object.values(local)) if (m.routes) await app.register(m.routes);
  const agent = await registerEdgeRoutes(app, { platform, local });
  await registerConsole(app, { config, embedded: true });
  await mountGateway(app, {
    verifier: await callerVerifierFor(config),
    metrics: platform.metrics,
    config,
    plugins: [approvalAudit(platform, agent)],
    dataSource: (name) =>
      withQuoteFallback(platform, name, new InProcessDataSource((local[name] as SubgraphModule).schema)),
  });
  return running(app, platform, local);
}

/** Distributed topology, gateway process: subgraphs over HTTP, plus the edge routes. */
export async function buildDistributedGateway(
  config: Config,
  opts: StartOptions = {},
): Promise<RunningSystem> {
  const platform = await createPlatform(config, { service: 'gateway', ...opts });
  const urls: Record<SubgraphName, string> = {
    pricing: config.PRICING_URL,
    promotions: config.PROMOTIONS_URL,
    procurement: config.PROCUREMENT_URL,
  };
  const app = createHttpApp(platform, { shed: edgeShedRoute });
  const agent = await registerEdgeRoutes(app, { platform, local: {} });
  await registerConsole(app, { config, embedded: false });
  const remotes: RemoteSubgraphDataSource[] = [];
  const merging =
    config.SUBGRAPH_FETCH_MERGING === 'on'
      ? { perCaller: perCallerCheck(perCallerFieldNames(supergraphSdl())) }
      : undefined;
  await mountGateway(app, {
    verifier: await callerVerifierFor(config),
    metrics: platform.metrics,
    config,
    plugins: [approvalAudit(platform, agent)],
    dataSource: (name) => {
      const remote = new RemoteSubgraphDataSource(
        name,
        `${urls[name]}/graphql`,
        config.GATEWAY_SHARED_SECRET,
        config.SUBGRAPH_TIMEOUT_MS,
        merging,
      );
      remotes.push(remote);
      return withQuoteFallback(platform, name, remote);
    },
  });
  // Fastify runs onClose hooks last-registered first, so this runs before Apollo stops, but after
  // the server has stopped taking requests; `close()` lets the fetches in flight finish.
  app.addHook('onClose', async () => {
    await Promise.all(remotes.map((r) => r.close()));
  });
  return running(app, platform, {});
}
