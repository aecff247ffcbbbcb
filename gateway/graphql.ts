import { readFileSync } from 'node:fs';
import type { GraphQLDataSource } from '@apollo/gateway';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { RequestContext } from '../lib/auth/context.ts';
import type { CallerVerifier } from '../lib/auth/jwt.ts';
import { roleRequirements } from '../lib/auth/permissions.ts';
import type { Config } from '../lib/config.ts';
import { gatewayContext } from '../lib/graphql/caller-context.ts';
import type { SubgraphName } from '../lib/graphql/subgraph.ts';
import { servedHosts } from '../lib/http/served-hosts.ts';
import { demandControl } from './graphql/demand-control.ts';
import { foreignOriginPlugin } from './graphql/foreign-origin.ts';
import { knownOperationTypes } from './graphql/known-operation-types.ts';
import { permissionsPlugin } from './permissions-plugin.ts';

export const supergraphSdl = (): string =>
  readFileSync(new URL('../schemas/supergraph.graphql', import.meta.url), 'utf8');

/**
 * The federated GraphQL endpoint at /graphql: an Apollo gateway over the committed supergraph,
 * with the role rules of its SDL checked before any subgraph is called.
 */
export async function mountGateway(
  app: FastifyInstance,
  opts: {
    verifier: CallerVerifier;
    metrics: Registry;
    /** Demand control: limits, persisted operations, safelist (GRAPHQL_* settings). */
    config: Config;
    dataSource: (name: SubgraphName) => GraphQLDataSource<RequestContext>;
    /** Tests compose their own; the default is the committed schemas/supergraph.graphql. */
    supergraphSdl?: string;
    /** More plugins, after the role and demand checks (the approval decisions' audit). */
    plugins?: ApolloServerPlugin<RequestContext>[];
  },
): Promise<ApolloServer<RequestContext>> {
  const sdl = opts.supergraphSdl ?? supergraphSdl();
  const fetches = new Counter({
    name: 'gateway_subgraph_requests_total',
    help: 'Requests the gateway sent to each subgraph',
    labelNames: ['subgraph'],
    registers: [opts.metrics],
  });
  const gateway = new ApolloGateway({
    supergraphSdl: sdl,
    buildService: ({ name }) => {
      const source = opts.dataSource(name as SubgraphName);
      const counter = fetches.labels(name);
      return {
        process: (request) => {
          counter.inc();
          return source.process(request as Parameters<typeof source.process>[0]);
        },
      };
    },
  });
  const demand = demandControl(opts.config, opts.metrics);
  const apollo = new ApolloServer<RequestContext>({
    gateway,
    ...demand.server,
    validationRules: [...(demand.server.validationRules ?? []), knownOperationTypes],
    plugins: [
      foreignOriginPlugin(servedHosts(opts.config)),
      permissionsPlugin(roleRequirements(sdl)),
      ...demand.plugins,
      ...(opts.plugins ?? []),
    ],
    includeStacktraceInErrorResponses: false,
    // One shutdown owner: closeOnSignals → app.close() (Fastify drains in-flight requests)
    // → onClose → apollo.stop(). Apollo's own signal handler re-raises the signal (exit 143),
    // and its Fastify drain plugin calls app.close() from inside stop() (a deadlock).
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  app.addHook('onClose', () => apollo.stop());
  app.route({
    ...demand.route,
    method: ['GET', 'POST', 'OPTIONS'],
    url: '/graphql',
    handler: fastifyApolloHandler(apollo, { context: gatewayContext(opts.verifier) }),
  });
  return apollo;
}
